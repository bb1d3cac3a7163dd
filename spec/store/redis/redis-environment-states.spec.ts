/**
 * Issue 38, what owners say of their environments in Redis (`ClusterState.environmentStates`), against a
 * real redis-server: a publish at the owner's epoch (a fenced replica's refused, never over the new
 * owner's), the reads every replica lists with (served while the owner's lease holds, or a fresh claim
 * within its grace), and the eviction of an environment no replica serves, each environment to one of
 * two stores evicting at once. Time in Redis is Redis's own: where a spec needs it to pass, it waits for
 * Redis's expiry of the lease (its keyspace event), or moves a stored time back, as time passing would.
 */
import type Redis from 'ioredis';
import type { PublishedState } from '../../../src/store/cluster-state';
import { environmentTag, leaseKey, registrationKey, stateKey } from '../../../src/store/redis/redis-keys';
import type { RedisStateStore } from '../../../src/store/redis/redis-state-store';
import { redisStateRig } from './redis-rig';

const CONNECTED: PublishedState = { state: 'connected', generation: 2, errorCode: undefined, error: undefined };
const FAILED: PublishedState = { state: 'failed', generation: 1, errorCode: 'RESUME_FAILED', error: 'the executor no longer had the session' };
const MINUTE = 60_000;

describe('RedisStateStore: what owners say of their environments', () => {
  const rig = redisStateRig('exec-rx-states');
  const { client, open } = rig;
  let prefix: string;
  beforeEach(() => {
    prefix = rig.prefix();
  });
  const register = (store: RedisStateStore, id: string): Promise<void> =>
    store.setRegistration({ id, registrationId: `reg-${id}`, accessKeyId: 'AKID1', tokenDigest: 'a'.repeat(64) });
  /** Moves environment `id`'s registration `ms` into the past (as time passing would). */
  const ageRegistration = async (id: string, ms: number): Promise<void> => {
    const redis = client();
    await redis.hincrby(registrationKey(prefix, id), 'registeredAt', -ms);
  };

  it("publishes the owner's state at its epoch; a fenced replica's publish is refused and never overwrites the new owner's", async () => {
    const a = await open();
    const b = await open();
    expect(await a.environmentStates.publish('env-1', 'host-a', 1, CONNECTED, MINUTE)).toBe('unowned');
    const first = await a.claim('env-1', 'host-a');
    await a.setSession('env-1', { sessionId: 's-1', accessKeyId: 'AKID1' }, first);
    expect(await a.environmentStates.publish('env-1', 'host-a', first, CONNECTED, MINUTE)).toBe('written');
    // Read by the other replica: the owner, its epoch, served (the publish renewed its lease), what it said.
    expect(await b.environmentStates.owned(MINUTE)).toEqual([{ id: 'env-1', owner: 'host-a', epoch: first, served: true, published: CONNECTED }]);
    expect(await client().get(leaseKey(prefix, 'env-1'))).toBe(`host-a ${first}`);

    const second = await b.claim('env-1', 'host-b');
    // Claimed since it said anything: starting (nothing published at its epoch), served within its grace.
    expect(await a.environmentStates.owned(MINUTE)).toEqual([{ id: 'env-1', owner: 'host-b', epoch: second, served: true, published: undefined }]);
    expect(await a.environmentStates.publish('env-1', 'host-a', first, { ...CONNECTED, state: 'disconnected' }, MINUTE)).toBe('stale');
    expect(await b.environmentStates.publish('env-1', 'host-b', second, FAILED, MINUTE)).toBe('written');
    expect(await a.environmentStates.publish('env-1', 'host-a', first, CONNECTED, MINUTE)).toBe('stale');
    expect(await a.environmentStates.owned(MINUTE)).toEqual([{ id: 'env-1', owner: 'host-b', epoch: second, served: true, published: FAILED }]);
    await expect(a.environmentStates.publish('env-1', 'host-b', second, FAILED, 0)).rejects.toBeInstanceOf(TypeError);

    // Forgotten: its state goes with its other records.
    await b.forget('env-1');
    expect(await client().keys(`${environmentTag(prefix, 'env-1')}:*`)).toEqual([]);
    expect(await a.environmentStates.owned(MINUTE)).toEqual([]);
  });

  it("counts an owner out once its lease ran out (what it published stays readable), and a silent claim once its grace passed", async () => {
    const store = await open();
    const redis = client();
    const epoch = await store.claim('env-1', 'host-a');
    await register(store, 'env-1');
    expect(await store.environmentStates.publish('env-1', 'host-a', epoch, CONNECTED, 1_000)).toBe('written');
    const lapsed = expired(redis, leaseKey(prefix, 'env-1'));
    expect((await store.environmentStates.owned(MINUTE))[0]?.served).toBe(true);
    await lapsed;
    expect(await store.environmentStates.owned(MINUTE)).toEqual([{ id: 'env-1', owner: 'host-a', epoch, served: false, published: CONNECTED }]);
    // A renewal by the owner at its epoch serves it again.
    expect(await store.renewLease('env-1', 'host-a', epoch, MINUTE)).toBe(true);
    expect((await store.environmentStates.owned(MINUTE))[0]?.served).toBe(true);

    // A claim that never renewed nor published: served within the grace the first read gave it, not after.
    const silent = await store.claim('env-2', 'host-c');
    await register(store, 'env-2');
    expect((await store.environmentStates.owned(MINUTE)).find((owned) => owned.id === 'env-2')).toEqual({ id: 'env-2', owner: 'host-c', epoch: silent, served: true, published: undefined });
    expect(Number(await redis.hget(stateKey(prefix, 'env-2'), 'graceUntil'))).toBeGreaterThan(0);
    await redis.hincrby(stateKey(prefix, 'env-2'), 'graceUntil', -2 * MINUTE);
    expect((await store.environmentStates.owned(MINUTE)).find((owned) => owned.id === 'env-2')?.served).toBe(false);
  });

  it('evicts only an environment no replica serves whose registration is older than the bound, with every record of it', async () => {
    const store = await open();
    const redis = client();
    // Registered long ago, never claimed.
    await register(store, 'unclaimed');
    await ageRegistration('unclaimed', 2 * MINUTE);
    // Registered long ago, its owner's lease held.
    await register(store, 'served');
    await ageRegistration('served', 2 * MINUTE);
    const served = await store.claim('served', 'host-a');
    expect(await store.renewLease('served', 'host-a', served, MINUTE)).toBe(true);
    // Registered lately, never claimed.
    await register(store, 'young');
    // Registered long ago; its owner published that it failed, then its lease ran out.
    await register(store, 'lapsed');
    await ageRegistration('lapsed', 2 * MINUTE);
    const lapsed = await store.claim('lapsed', 'host-b');
    await store.setStdin({ environmentId: 'lapsed', processId: 'p-1' }, { target: 'fifo', writerProcessId: 'w', nextWriteId: 1, endWriteId: null, ttyPath: null, writes: [] }, lapsed);
    expect(await store.environmentStates.publish('lapsed', 'host-b', lapsed, FAILED, MINUTE)).toBe('written');
    await redis.del(leaseKey(prefix, 'lapsed'));
    // Registered long ago, claimed, and silent since: kept within the grace its first look gave it.
    await register(store, 'silent');
    await ageRegistration('silent', 2 * MINUTE);
    await store.claim('silent', 'host-c');
    expect(await store.environmentCount()).toBe(5);

    const evicted = new Set<string>();
    for (let id = await store.environmentStates.evictUnserved(MINUTE, MINUTE); id !== undefined; id = await store.environmentStates.evictUnserved(MINUTE, MINUTE)) evicted.add(id);
    expect([...evicted].sort()).toEqual(['lapsed', 'unclaimed']);
    expect(await store.environmentCount()).toBe(3);
    for (const id of evicted) expect(await redis.keys(`${environmentTag(prefix, id)}:*`)).toEqual([]);
    expect(await store.registration('served')).toBeDefined();

    // The silent claim's grace passed: no replica serves it.
    await redis.hincrby(stateKey(prefix, 'silent'), 'graceUntil', -2 * MINUTE);
    expect(await store.environmentStates.evictUnserved(MINUTE, MINUTE)).toBe('silent');
    expect(await store.environmentStates.evictUnserved(MINUTE, MINUTE)).toBeUndefined();
    expect(await store.environmentCount()).toBe(2);
  });

  it('gives each environment to one of two replicas evicting at once', async () => {
    const a = await open();
    const b = await open();
    for (let round = 0; round < 10; round += 1) {
      const id = `stale-${round}`;
      await register(a, id);
      await ageRegistration(id, 2 * MINUTE);
      const outcomes = await Promise.all([a.environmentStates.evictUnserved(MINUTE, MINUTE), b.environmentStates.evictUnserved(MINUTE, MINUTE)]);
      expect(outcomes.filter((outcome) => outcome !== undefined)).toEqual([id]);
      expect(await a.environmentCount()).toBe(0);
    }
  });
});

/** Resolves once Redis has expired `name` (its `expired` keyspace event, asked for on a connection of its own). */
async function expired(redis: Redis, name: string): Promise<void> {
  await redis.config('SET', 'notify-keyspace-events', 'Ex');
  const listener = redis.duplicate();
  try {
    const done = new Promise<void>((resolve) => listener.on('message', (_channel: string, key: string) => (key === name ? resolve() : undefined)));
    await listener.subscribe('__keyevent@0__:expired');
    if ((await redis.exists(name)) === 0) return;
    await done;
  } finally {
    listener.disconnect();
  }
}
