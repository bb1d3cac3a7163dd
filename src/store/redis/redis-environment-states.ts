/**
 * What the owners of environments say of them in Redis (`ClusterState.environmentStates`, issue 38): each
 * owner publishes its environment's state (starting, connected, disconnected, failed; its generation and
 * error) into the environment's `…:state` hash, checked against the owner hash in the same script, so a
 * fenced replica never overwrites the new owner's; every replica reads them when it lists; and an
 * environment no replica serves any more (no owner, or its owner's lease ran out) whose registration is
 * older than a bound is evicted by whichever replica needs its place, each candidate checked and deleted
 * in one script (`./redis-environment-scripts`). Also the registration's write, stamped on Redis's clock
 * (what the eviction's age is measured by).
 */
import type { EnvironmentStates, OwnedEnvironment, OwnerState, PublishedState, PublishOutcome } from '../cluster-state';
import type { PersistedRegistration } from '../state-store';
import * as keys from './redis-keys';
import { EVICT_UNSERVED, PUBLISH_STATE, READ_STATE, REGISTER } from './redis-environment-scripts';
import type { RedisClient } from './redis-scripts';

/** The longest error message published (a library message: longer ones are cut). */
const MAX_ERROR_CHARS = 500;

const OWNER_STATES: readonly OwnerState[] = ['starting', 'connecting', 'connected', 'disconnected', 'failed', 'closed'];

/** Runs a call of the store (its connection's bookkeeping: `flush` waits for it, ClosedError once closed). */
export type StoreRun = <T>(task: () => Promise<T>) => Promise<T>;

/** Every key `forget` (and an eviction) deletes of environment `id`, the stdin set last but one: owner, lease, state, session, registration, stdins. */
export const environmentRecords = (prefix: string, id: string): string[] => [
  keys.ownerKey(prefix, id),
  keys.leaseKey(prefix, id),
  keys.stateKey(prefix, id),
  keys.sessionKey(prefix, id),
  keys.registrationKey(prefix, id),
  keys.stdinSetKey(prefix, id),
];

/**
 * Records environment `registration.id`'s latest registration, stamped with Redis's clock. Two steps (the
 * set of ids is in another hash slot): the id first, so a registration is never kept unlisted; an id listed
 * without records (a write that failed half way) reads as absent.
 */
export async function register(redis: RedisClient, prefix: string, registration: PersistedRegistration): Promise<void> {
  const { id, registrationId, accessKeyId, tokenDigest } = registration;
  await Promise.all([redis.sadd(keys.environmentsKey(prefix), id), REGISTER.run(redis, [keys.registrationKey(prefix, id)], [registrationId, accessKeyId, tokenDigest])]);
}

/**
 * The owners' states in Redis (see the module's doc), on the state store's connection and bookkeeping:
 * each call rejects with Redis's error, or ClosedError once the store is closed; the store's `close()`
 * waits for the calls under way. Holds nothing of its own to tear down.
 */
export class RedisEnvironmentStates implements EnvironmentStates {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly run: StoreRun,
  ) {}

  /** See `EnvironmentStates.publish`; rejects with a TypeError for an epoch or ttl that is not an integer (the ttl positive). */
  publish(id: string, owner: string, epoch: number, state: PublishedState, ttlMs: number): Promise<PublishOutcome> {
    if (!Number.isSafeInteger(epoch) || !Number.isSafeInteger(ttlMs) || ttlMs <= 0) return Promise.reject(new TypeError('an epoch and a ttl are integers (the ttl positive)'));
    const error = (state.error ?? '').slice(0, MAX_ERROR_CHARS);
    const args = [owner, epoch, ttlMs, state.state, state.generation, state.errorCode ?? '', error];
    return this.run(async () => {
      const reply = await PUBLISH_STATE.run(this.redis, this.keysOf(id).slice(0, 3), args);
      const outcome = Array.isArray(reply) ? reply[0] : undefined;
      return outcome === 'ok' ? 'written' : outcome === 'unowned' ? 'unowned' : 'stale';
    });
  }

  /** See `EnvironmentStates.owned`: one script per listed environment, all at once; sorted by id. */
  owned(graceMs: number): Promise<readonly OwnedEnvironment[]> {
    return this.run(async () => {
      const ids = await this.redis.smembers(keys.environmentsKey(this.prefix));
      const found = await Promise.all(ids.map(async (id) => ownedOf(id, await READ_STATE.run(this.redis, this.keysOf(id).slice(0, 3), [graceMs]))));
      return found.filter((owned): owned is OwnedEnvironment => owned !== undefined).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    });
  }

  /** See `EnvironmentStates.evictUnserved`: the listed environments one after another, until one is evicted. */
  evictUnserved(olderThanMs: number, graceMs: number): Promise<string | undefined> {
    return this.run(async () => {
      for (const id of await this.redis.smembers(keys.environmentsKey(this.prefix))) {
        if ((await EVICT_UNSERVED.run(this.redis, this.keysOf(id), [graceMs, olderThanMs])) !== 1) continue;
        // Unlisted after its records went (another hash slot): an id is never unlisted while its records remain.
        await this.redis.srem(keys.environmentsKey(this.prefix), id);
        return id;
      }
      return undefined;
    });
  }

  /** Owner, lease, state, session, registration, stdins: the scripts' KEYS. */
  private keysOf(id: string): string[] {
    return environmentRecords(this.prefix, id);
  }
}

/** `READ_STATE`'s reply for `id`, or undefined (no owner, or a reply this store did not write). */
function ownedOf(id: string, reply: unknown): OwnedEnvironment | undefined {
  if (!Array.isArray(reply) || reply.length < 7) return undefined;
  const [owner, epochText, served, state, generation, errorCode, error] = reply.map(String);
  const epoch = Number(epochText);
  if (owner === undefined || !Number.isSafeInteger(epoch)) return undefined;
  const known = OWNER_STATES.find((name) => name === state);
  const published: PublishedState | undefined =
    known === undefined ? undefined : { state: known, generation: Number(generation) || 0, errorCode: errorCode || undefined, error: error || undefined };
  return { id, owner, epoch, served: served === '1', published };
}
