/**
 * The Lua scripts of what owners say of their environments (`./redis-environment-states`), each on one
 * environment's keys (one hash tag, one shard) and atomic there. Times are Redis's own clock (`TIME`, ms),
 * so no replica's clock plays a part. A lease is "held" when the `…:lease` key holds `<owner> <epoch>` of
 * the owner hash now (as `RENEW_LEASE` writes it); the `…:state` hash is what the owner published at its
 * epoch, or, for a claim that said nothing yet, the `graceUntil` a reader gave it (see `STAMP`).
 */
import { LuaScript } from './redis-scripts';

/** `now`: Redis's clock in ms. */
const NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`;

/**
 * With `held` the owner hash's (owner, epoch) and KEYS[3] the state hash: `said` is what the state hash says
 * at the owner's epoch (epoch, graceUntil, state, generation, errorCode, error). A state hash of an older
 * claim (or none) is replaced by a grace stamp: the claimer has ARGV[1] ms from now to renew or publish.
 */
const STAMP = `
local said = redis.call('HMGET', KEYS[3], 'epoch', 'graceUntil', 'state', 'generation', 'errorCode', 'error')
if tonumber(said[1] or '-1') ~= tonumber(held[2]) then
  local grace = string.format('%.0f', now + tonumber(ARGV[1]))
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[3], 'owner', held[1], 'epoch', held[2], 'graceUntil', grace)
  said = {held[2], grace, false, false, false, false}
end
local leased = redis.call('GET', KEYS[2]) == held[1] .. ' ' .. held[2]
local served = leased or (not said[3] and tonumber(said[2] or '0') >= now)
`;

/**
 * KEYS owner, lease, state; ARGV owner, epoch, ttl ms, state, generation, errorCode, error. When the owner
 * hash says (owner, epoch): the lease set for ttl ms and the state hash replaced, `{'ok'}`; `{'unowned'}`
 * when there is no owner hash (nothing written); `{'stale', current}` when another owner or epoch holds it.
 */
export const PUBLISH_STATE = new LuaScript(`
local held = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if not held[1] or not held[2] then return {'unowned'} end
if held[1] ~= ARGV[1] or tonumber(held[2]) ~= tonumber(ARGV[2]) then return {'stale', held[2]} end
redis.call('SET', KEYS[2], held[1] .. ' ' .. held[2], 'PX', ARGV[3])
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[3], 'owner', held[1], 'epoch', held[2], 'state', ARGV[4], 'generation', ARGV[5], 'errorCode', ARGV[6], 'error', ARGV[7])
return {'ok'}
`);

/**
 * KEYS owner, lease, state; ARGV grace ms. `{}` for an environment nobody claimed; else {owner, epoch,
 * served (1 or 0), state, generation, errorCode, error} ('' for what was not published at its epoch).
 */
export const READ_STATE = new LuaScript(`${NOW}
local held = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if not held[1] or not held[2] then return {} end
${STAMP}
return {held[1], held[2], served and 1 or 0, said[3] or '', said[4] or '', said[5] or '', said[6] or ''}
`);

/**
 * KEYS owner, lease, state, session, registration, stdins; ARGV grace ms, age ms. Deletes the environment's
 * records (its stdin records too) and replies 1 when no replica serves it (no owner hash, or not `served`
 * as `STAMP` says) and its registration is older than the age (one without `registeredAt`, of an older
 * host, counts as old; without a registration it must have a session); else 0, nothing deleted.
 */
export const EVICT_UNSERVED = new LuaScript(`${NOW}
local registeredAt = redis.call('HGET', KEYS[5], 'registeredAt')
if registeredAt and tonumber(registeredAt) + tonumber(ARGV[2]) > now then return 0 end
if redis.call('EXISTS', KEYS[5]) == 0 and redis.call('EXISTS', KEYS[4]) == 0 then return 0 end
local held = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if held[1] and held[2] then
${STAMP}
  if served then return 0 end
end
for _, key in ipairs(redis.call('SMEMBERS', KEYS[6])) do redis.call('DEL', key) end
redis.call('DEL', unpack(KEYS))
return 1
`);

/** KEYS registration; ARGV registrationId, accessKeyId, tokenDigest. Replaces the registration, with `registeredAt` on Redis's clock. */
export const REGISTER = new LuaScript(`${NOW}
redis.call('HSET', KEYS[1], 'registrationId', ARGV[1], 'accessKeyId', ARGV[2], 'tokenDigest', ARGV[3], 'registeredAt', string.format('%.0f', now))
return 1
`);
