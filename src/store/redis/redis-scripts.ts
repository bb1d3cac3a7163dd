/**
 * The Lua scripts of the Redis state store (`./redis-state-store`). Each runs on one shard (its keys share
 * one hash tag, `./redis-keys`) and is atomic there: every write of an environment that carries an epoch
 * reads the environment's owner hash and refuses a stale epoch (the reply `{'stale', current}`) in the
 * same step as it writes, so a refused write changes nothing. A script is sent by its SHA-1 (EVALSHA) and
 * by its text when Redis does not know it yet (NOSCRIPT: after a restart, on a new shard).
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

/** The ioredis client the store talks to: one Redis, or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** One Lua script, run by EVALSHA with EVAL as the fallback. */
export class LuaScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Runs the script with `keys` (all in one hash tag) and `args`; resolves with Redis's reply. */
  async run(redis: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error: unknown) {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return redis.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}

/** The epoch fence every checked write starts with: KEYS[1] the owner hash, ARGV[1] the writer's epoch. */
const FENCE = `
local current = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
if tonumber(ARGV[1]) < current then return {'stale', string.format('%.0f', current)} end
`;

/**
 * KEYS owner; ARGV owner, mode, signedAt (ms, or '' when the claim says none), window (ms). The next epoch:
 * the current one plus one (1 at the first claim), and in `clock` mode at least Redis's TIME in ms, so
 * epochs only grow even after Redis restarted empty. A claim whose upgrade was signed before the current
 * owner's by at most `window` is refused, nothing written: `{'stale', signedAt, epoch}` of the owner.
 */
export const CLAIM = new LuaScript(`
local held = redis.call('HMGET', KEYS[1], 'epoch', 'signedAt')
local current = tonumber(held[1] or '0')
local signed = tonumber(ARGV[3])
local ownerSigned = tonumber(held[2] or '')
if signed and ownerSigned and signed < ownerSigned and ownerSigned - signed <= tonumber(ARGV[4]) then
  return {'stale', string.format('%.0f', ownerSigned), string.format('%.0f', current)}
end
local epoch = current + 1
if ARGV[2] == 'clock' then
  local time = redis.call('TIME')
  local ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  if ms > epoch then epoch = ms end
end
local text = string.format('%.0f', epoch)
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'epoch', text)
if signed then redis.call('HSET', KEYS[1], 'signedAt', ARGV[3]) else redis.call('HDEL', KEYS[1], 'signedAt') end
return {'ok', text}
`);

/** KEYS owner, session; ARGV epoch, sessionId, accessKeyId, now. The same session again writes nothing. */
export const SET_SESSION = new LuaScript(`${FENCE}
local known = redis.call('HMGET', KEYS[2], 'sessionId', 'accessKeyId')
if known[1] == ARGV[2] and known[2] == ARGV[3] then return {'ok'} end
redis.call('HSET', KEYS[2], 'sessionId', ARGV[2], 'accessKeyId', ARGV[3], 'updatedAt', ARGV[4])
return {'ok'}
`);

/** KEYS owner, start; ARGV epoch, digest, environmentId, processId, fingerprint, now, nonce. Replaces the record whole. */
export const RECORD_START = new LuaScript(`${FENCE}
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'digest', ARGV[2], 'environmentId', ARGV[3], 'processId', ARGV[4], 'fingerprint', ARGV[5],
  'state', 'sent', 'recordedAt', ARGV[6], 'nonce', ARGV[7])
return {'ok'}
`);

/** KEYS owner, start; ARGV epoch. Marks a kept record `started`; nothing for one that is gone. */
export const MARK_STARTED = new LuaScript(`${FENCE}
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'state', 'started') end
return {'ok'}
`);

/** KEYS owner, start; ARGV epoch. Deletes the record; replies with its nonce ('' when it was gone). */
export const FORGET_START = new LuaScript(`${FENCE}
local nonce = redis.call('HGET', KEYS[2], 'nonce') or ''
redis.call('DEL', KEYS[2])
return {'ok', nonce}
`);

/**
 * KEYS index, start-environments, sequence; ARGV digest, "<nonce> <environmentId>", max. Indexes a start
 * as the newest and drops the oldest past the bound: replies with each dropped digest and its
 * "<nonce> <environmentId>", whose records the store then deletes (in their environments' tags).
 */
export const INDEX_START = new LuaScript(`
local sequence = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[1], sequence, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
local dropped = {}
if over > 0 then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, over - 1)
  for _, digest in ipairs(oldest) do
    table.insert(dropped, digest)
    table.insert(dropped, redis.call('HGET', KEYS[2], digest) or '')
    redis.call('HDEL', KEYS[2], digest)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
end
return dropped
`);

/** KEYS index, start-environments; ARGV digest, "<nonce> <environmentId>". Unindexes a start if that write is still the indexed one. */
export const UNINDEX_START = new LuaScript(`
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
`);

/** KEYS start; ARGV nonce. Deletes a start past the bound, unless it was recorded again since (another nonce). */
export const DROP_START = new LuaScript(`
if redis.call('HGET', KEYS[1], 'nonce') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`);

/** KEYS owner, stdin, stdins; ARGV epoch, the record's JSON. */
export const SET_STDIN = new LuaScript(`${FENCE}
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], KEYS[2])
return {'ok'}
`);

/** KEYS owner, stdin, stdins; ARGV epoch. */
export const FORGET_STDIN = new LuaScript(`${FENCE}
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], KEYS[2])
return {'ok'}
`);

/** KEYS the environment's records, its set of stdin records last. Deletes them, its stdin records (the set's members) too. */
export const FORGET = new LuaScript(`
local stdins = redis.call('SMEMBERS', KEYS[#KEYS])
for _, key in ipairs(stdins) do redis.call('DEL', key) end
redis.call('DEL', unpack(KEYS))
return 1
`);

/** KEYS owner, lease; ARGV owner, epoch, ttl ms. 1 (and the lease set for ttl ms) when (owner, epoch) holds the environment; else 0. */
export const RENEW_LEASE = new LuaScript(`
local held = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if held[1] ~= ARGV[1] or tonumber(held[2]) ~= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. ARGV[2], 'PX', ARGV[3])
return 1
`);

/**
 * KEYS owner; ARGV owner, epoch, signedAt (or ''). Writes the owner hash (with the signing time of its
 * claim's upgrade, when known) when Redis has no epoch or a lower one: 1; 1 too when it holds the same; else 0.
 */
export const RESTORE_OWNER = new LuaScript(`
local held = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
local current = tonumber(held[2])
local epoch = tonumber(ARGV[2])
if current == nil or current < epoch then
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'epoch', ARGV[2])
  if tonumber(ARGV[3]) then redis.call('HSET', KEYS[1], 'signedAt', ARGV[3]) else redis.call('HDEL', KEYS[1], 'signedAt') end
  return 1
end
if current == epoch and held[1] == ARGV[1] then return 1 end
return 0
`);

/** The current epoch a script refused a write against, or undefined when the script wrote. */
export function staleEpochOf(reply: unknown): number | undefined {
  if (!Array.isArray(reply) || reply[0] !== 'stale') return undefined;
  return Number(reply[1]);
}
