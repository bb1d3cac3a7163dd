/**
 * The log store's Lua scripts, each checking the environment's owner epoch and writing in one step
 * (every key a script touches carries the environment's hash tag: one slot). They are defined on the
 * store's connection with `defineCommand` (ioredis sends EVAL the first time on a socket, EVALSHA after).
 *
 * - `append`: a batch of events (up to 64) to a process's stream, each entry stamped with its writer (`w`)
 *   and the writer's epoch (`p`); a seq at or below the last one logged is a no-op (a recovery read that
 *   overlaps live events never doubles); a writer whose epoch is below the owner's is refused, nothing
 *   written; then the quota: the oldest entries go (the newest
 *   always stays) until the output bytes held are within it; the meta hash counts what went, and the trims
 *   ZSET remembers each dropped seq with the bytes dropped up to it (a reader's marker starts where it was).
 * - `meta`: sets fields of a process's meta hash at an epoch (or unchecked), `create` first deleting
 *   what the keys held, else only when the process is known; then its retention (PEXPIRE, or PERSIST);
 *   or `drop`s the keys of a process its writer made and that never ran.
 */
import type Redis from 'ioredis';
import { StoreScriptError } from '../../errors';

/**
 * The dropped entries remembered per process (seq and output bytes dropped up to it) for exact `droppedBytes`
 * of a reader whose cursor the quota overtook; a reader further behind than the newest ones gets an upper bound.
 */
export const MAX_TRIM_STEPS = 4096;

const APPEND_LUA = `
local current = redis.call('HGET', KEYS[3], 'epoch')
if current and tonumber(current) > tonumber(ARGV[1]) then
  return {-1, 0, 0, 0, 0, 0, tonumber(current)}
end
local last = tonumber(redis.call('HGET', KEYS[2], 'lastSeq') or '0')
local stored = tonumber(redis.call('HGET', KEYS[2], 'storedBytes') or '0')
local trimmedTo = tonumber(redis.call('HGET', KEYS[2], 'trimmedTo') or '0')
local dropped = tonumber(redis.call('HGET', KEYS[2], 'droppedBytes') or '0')
local i = 5
for _ = 1, tonumber(ARGV[3]) do
  local seqText = ARGV[i]
  local seq = tonumber(seqText)
  local pairCount = tonumber(ARGV[i + 2])
  if seq > last then
    local fields = {}
    for j = 1, pairCount * 2 do fields[j] = ARGV[i + 2 + j] end
    fields[#fields + 1] = 'w'
    fields[#fields + 1] = ARGV[4]
    fields[#fields + 1] = 'p'
    fields[#fields + 1] = ARGV[1]
    redis.call('XADD', KEYS[1], seqText .. '-0', unpack(fields))
    last = seq
    stored = stored + tonumber(ARGV[i + 1])
  end
  i = i + 3 + pairCount * 2
end
local quota = tonumber(ARGV[2])
if quota > 0 and stored > quota then
  local cutId = nil
  local cut = trimmedTo
  local done = false
  local steps = {}
  while not done and stored > quota do
    local entries = redis.call('XRANGE', KEYS[1], cutId and ('(' .. cutId) or '-', '+', 'COUNT', 64)
    if #entries == 0 then break end
    for _, entry in ipairs(entries) do
      local seq = tonumber(string.match(entry[1], '^(%d+)'))
      if seq >= last or stored <= quota then
        done = true
        break
      end
      local fields = entry[2]
      local kind, size = nil, 0
      for j = 1, #fields, 2 do
        if fields[j] == 'k' then kind = fields[j + 1] elseif fields[j] == 'b' then size = string.len(fields[j + 1]) end
      end
      if kind == 'o' then
        stored = stored - size
        dropped = dropped + size
      end
      cut = seq
      cutId = entry[1]
      steps[#steps + 1] = string.format('%d', cut)
      steps[#steps + 1] = string.format('%d:%d', cut, dropped)
    end
  end
  if cutId then
    redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d-0', cut + 1))
    trimmedTo = cut
    for k = 1, #steps, 512 do redis.call('ZADD', KEYS[4], unpack(steps, k, math.min(k + 511, #steps))) end
    local kept = redis.call('ZCARD', KEYS[4])
    if kept > ${MAX_TRIM_STEPS} then redis.call('ZREMRANGEBYRANK', KEYS[4], 0, kept - ${MAX_TRIM_STEPS} - 1) end
  end
end
redis.call('HSET', KEYS[2], 'lastSeq', string.format('%d', last), 'storedBytes', string.format('%d', stored),
  'trimmedTo', string.format('%d', trimmedTo), 'droppedBytes', string.format('%d', dropped))
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ttl) end
end
return {1, last, stored, redis.call('XLEN', KEYS[1]), trimmedTo, dropped, tonumber(current or '0')}
`;

const META_LUA = `
local epoch = tonumber(ARGV[1])
local current = redis.call('HGET', KEYS[2], 'epoch')
if epoch >= 0 and current and tonumber(current) > epoch then return {-1, tonumber(current)} end
if ARGV[2] == 'create' then
  redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
elseif ARGV[2] == 'drop' then
  if tonumber(redis.call('HGET', KEYS[1], 'epoch') or '-1') ~= epoch then return {0, 0} end
  redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
  return {1, tonumber(current or '0')}
elseif ARGV[2] == 'restore' then
  if redis.call('HEXISTS', KEYS[1], 'startedAt') == 1 then return {0, 0} end
  for i = 4, #ARGV - 1, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
  return {1, tonumber(current or '0')}
elseif redis.call('EXISTS', KEYS[1]) == 0 then
  return {0, 0}
end
if #ARGV > 3 then redis.call('HSET', KEYS[1], unpack(ARGV, 4)) end
local ttl = tonumber(ARGV[3])
local keys = {KEYS[1], KEYS[3], KEYS[4]}
if ttl < 0 then
  for _, key in ipairs(keys) do redis.call('PERSIST', key) end
elseif ttl > 0 then
  local now = redis.call('PTTL', KEYS[1])
  if now < 0 or now > ttl then
    for _, key in ipairs(keys) do redis.call('PEXPIRE', key, ttl) end
  end
end
return {1, tonumber(current or '0')}
`;

const APPEND_COMMAND = 'execRxLogAppend';
const META_COMMAND = 'execRxLogMeta';

/** What one `append` call did. */
export interface AppendResult {
  /** The batch was written (or was a no-op); false: the writer's epoch is stale, nothing was written. */
  readonly accepted: boolean;
  /** The last seq the stream holds or covers. */
  readonly lastSeq: number;
  /** Output bytes the stream holds. */
  readonly storedBytes: number;
  /** Entries the stream holds. */
  readonly storedEvents: number;
  /** The last seq the quota dropped (0: none). */
  readonly trimmedTo: number;
  /** Output bytes the quota dropped, ever. */
  readonly droppedBytes: number;
  /** The owner's epoch (0: no owner). */
  readonly currentEpoch: number;
}

/** What one `meta` call did: written, the process unknown (not written), or refused for a stale epoch. */
export type MetaResult = { readonly outcome: 'written' | 'unknown' } | { readonly outcome: 'stale'; readonly currentEpoch: number };

/** An argument of a script call. */
export type ScriptArg = string | Buffer;

/** The log store's scripts on one connection (see the module's doc). */
export class LogScripts {
  /** Script calls made (each batch of events is one): for the specs and the metrics. */
  calls = 0;

  constructor(private readonly redis: Redis) {
    redis.defineCommand(APPEND_COMMAND, { numberOfKeys: 4, lua: APPEND_LUA });
    redis.defineCommand(META_COMMAND, { numberOfKeys: 4, lua: META_LUA });
  }

  /**
   * Appends `args` (see `encodeEvent`, `count` events) at `epoch`, each entry stamped with `writer` and
   * `epoch`, keeping the stream within `quotaBytes` (0: unbounded).
   */
  async append(
    keys: readonly [stream: string, meta: string, owner: string, trims: string],
    writer: { readonly epoch: number; readonly name: string },
    quotaBytes: number,
    count: number,
    args: readonly ScriptArg[],
  ): Promise<AppendResult> {
    this.calls += 1;
    const head = [String(writer.epoch), String(quotaBytes), String(count), writer.name];
    const reply = numbers(APPEND_COMMAND, await this.call(APPEND_COMMAND, [...keys, ...head, ...args]), 7);
    const [status = 0, lastSeq = 0, storedBytes = 0, storedEvents = 0, trimmedTo = 0, droppedBytes = 0, currentEpoch = 0] = reply;
    return { accepted: status === 1, lastSeq, storedBytes, storedEvents, trimmedTo, droppedBytes, currentEpoch };
  }

  /**
   * Sets `fields` of a process's meta hash at `epoch` (-1: unchecked), `create`: what its keys held is
   * deleted first; `update`: only a hash that exists; `restore`: only the fields a hash lacks, when it
   * lacks `startedAt` (Redis lost it; appends since made its counters); `drop`: the keys are deleted, only
   * when the hash names `epoch` as its writer's (a process that writer made and that never ran); `ttlMs` > 0:
   * its keys expire then (unless sooner already), < 0: they no longer expire.
   */
  async meta(
    keys: readonly [meta: string, owner: string, stream: string, trims: string],
    epoch: number,
    mode: 'create' | 'update' | 'restore' | 'drop',
    ttlMs: number,
    fields: readonly string[],
  ): Promise<MetaResult> {
    const [status = 0, currentEpoch = 0] = numbers(META_COMMAND, await this.call(META_COMMAND, [...keys, String(epoch), mode, String(ttlMs), ...fields]), 2);
    return status === 1 ? { outcome: 'written' } : status === 0 ? { outcome: 'unknown' } : { outcome: 'stale', currentEpoch };
  }

  /** Calls the script `name`; rejects with StoreScriptError (`undefined`) when the connection lacks it, or with Redis's failure. */
  private async call(name: string, args: readonly ScriptArg[]): Promise<unknown> {
    const command: unknown = Reflect.get(this.redis, name);
    if (typeof command !== 'function') throw new StoreScriptError(name, 'undefined', '');
    const reply: unknown = await Reflect.apply(command, this.redis, args);
    return reply;
  }
}

/** The script `name`'s reply, an array of at least `length` integers, as numbers; else throws StoreScriptError (`reply`). */
function numbers(name: string, reply: unknown, length: number): number[] {
  const values = Array.isArray(reply) ? reply.map((value: unknown) => (typeof value === 'number' ? value : Number(value))) : [];
  if (!Array.isArray(reply) || values.length < length || values.some((value) => !Number.isSafeInteger(value))) {
    throw new StoreScriptError(name, 'reply', `${describeReply(reply)} where ${length} integers were expected`);
  }
  return values;
}

/** A reply in a few words for a message: its type, or an array's length (never its contents: they may be a process's output). */
const describeReply = (reply: unknown): string => (Array.isArray(reply) ? `an array of ${reply.length} values` : reply === null ? 'nil' : `a ${typeof reply}`);
