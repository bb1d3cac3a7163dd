/**
 * What the Redis state store does beyond the port's contract (spec/store/state-store.contract.ts runs
 * that), against a real redis-server: its key layout, epochs on Redis's clock that outgrow a Redis that
 * restarted empty, the fences between two hosts on one store, and the cluster mode's extras (one
 * registration, the count of environments, leases, the owners' rewrite, the boot marker, the count of
 * refused writes).
 */
import type Redis from 'ioredis';
import { ClosedError, StaleEpochError } from '../../../src/errors';
import { checkPrefix, environmentTag, ownerKey, stdinKey } from '../../../src/store/redis/redis-keys';
import { RedisStateStore } from '../../../src/store/redis/redis-state-store';
import type { StdinRecord } from '../../../src/store/stdin-record';
import { redisStateRig } from './redis-rig';

const stdin = (next: number): StdinRecord => ({ target: 'fifo', writerProcessId: 'feeder-1', nextWriteId: next, endWriteId: null, ttyPath: null, writes: [] });
const DIGEST = (n: number): string => n.toString(16).padStart(64, '0');

describe('RedisStateStore', () => {
  const rig = redisStateRig('exec-rx-test');
  const { client, open } = rig;
  let prefix: string;
  beforeEach(() => {
    prefix = rig.prefix();
  });
  const redisTimeMs = async (redis: Redis): Promise<number> => {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  it('keeps every key of an environment under its hash tag, and the owner as a hash of owner and epoch', async () => {
    expect(environmentTag('p', 'env-1')).toBe('p:{env:env-1}');
    expect(ownerKey('p', 'env-1')).toBe('p:{env:env-1}:owner');
    expect(environmentTag('p', 'a}b:c')).toBe('p:{env:a%7Db%3Ac}');
    expect(() => checkPrefix('a{b')).toThrow(TypeError);
    await expect(RedisStateStore.open({ redis: client(), prefix: 'bad}' })).rejects.toBeInstanceOf(TypeError);
    const store = await open();
    await store.claim('env-1', 'host-a');
    await store.setSession('env-1', { sessionId: 's-1', accessKeyId: 'AKID1' }, 1);
    await store.setRegistration({ id: 'env-1', registrationId: 'reg-1', accessKeyId: 'AKID1', tokenDigest: 'a'.repeat(64) });
    await store.setStdin({ environmentId: 'env-1', processId: 'p-1' }, stdin(2), 1);
    await store.recordStart({ digest: DIGEST(1), environmentId: 'env-1', processId: 'p-1', fingerprint: 'f' }, 1);
    const redis = client();
    expect(await redis.hgetall(ownerKey(prefix, 'env-1'))).toEqual({ owner: 'host-a', epoch: '1' });
    const ours = (await redis.keys(`${prefix}:*`)).filter((key) => !key.startsWith(`${prefix}:{global}:`));
    expect(ours.length).toBeGreaterThanOrEqual(6);
    for (const key of ours) expect(key.startsWith(`${environmentTag(prefix, 'env-1')}:`)).toBe(true);
    // No token anywhere: the registration holds the digest it was given, and when it was recorded (Redis's clock).
    const registration = await redis.hgetall(`${environmentTag(prefix, 'env-1')}:registration`);
    expect(registration).toEqual({ registrationId: 'reg-1', accessKeyId: 'AKID1', tokenDigest: 'a'.repeat(64), registeredAt: expect.stringMatching(/^\d{13}$/) });
    expect(Number(registration.registeredAt)).toBeLessThanOrEqual(await redisTimeMs(redis));
  });

  it("forgets an environment's every key, the stdin records' too, and none of another's", async () => {
    const store = await open();
    for (const id of ['env-1', 'env-2']) {
      await store.claim(id, 'host-a');
      await store.setSession(id, { sessionId: 's', accessKeyId: 'AKID1' }, 1);
      for (const processId of ['p-1', 'p-2']) await store.setStdin({ environmentId: id, processId }, stdin(2), 1);
      expect(await store.renewLease(id, 'host-a', 1, 60_000)).toBe(true);
    }
    await store.forget('env-1');
    const redis = client();
    expect(await redis.keys(`${environmentTag(prefix, 'env-1')}:*`)).toEqual([]);
    expect((await redis.keys(`${environmentTag(prefix, 'env-2')}:*`)).sort()).toEqual(
      ['lease', 'owner', 'session', 'stdin:p-1', 'stdin:p-2', 'stdins'].map((suffix) => `${environmentTag(prefix, 'env-2')}:${suffix}`),
    );
    expect(await store.environmentCount()).toBe(1);
  });

  it('claims on Redis\'s clock in clock mode: epochs grow, even after Redis restarted empty', async () => {
    const store = await open('clock');
    const redis = client();
    const before = await redisTimeMs(redis);
    const first = await store.claim('env-1', 'host-a');
    expect(first).toBeGreaterThanOrEqual(before);
    expect(await store.claim('env-1', 'host-b')).toBeGreaterThan(first);
    const second = (await store.owner('env-1'))?.epoch ?? 0;
    expect(await redis.hget(ownerKey(prefix, 'env-1'), 'epoch')).toBe(String(second));
    await rig.server().restart({ empty: true });
    expect(await store.owner('env-1')).toBeUndefined();
    // Redis forgot the epoch (and its scripts): the next claim still outgrows it, so host-b's old writes stay stale.
    const third = await store.claim('env-1', 'host-c');
    expect(third).toBeGreaterThan(second);
    await expect(store.setSession('env-1', { sessionId: 's-old', accessKeyId: 'AKID1' }, second)).rejects.toBeInstanceOf(StaleEpochError);
  });

  it('fences two hosts on one store: the older owner\'s writes are refused and counted, the newer\'s pass', async () => {
    const a = await open();
    const b = await open();
    expect(await a.claim('env-1', 'host-a')).toBe(1);
    await a.setStdin({ environmentId: 'env-1', processId: 'p-1' }, stdin(2), 1);
    expect(await b.claim('env-1', 'host-b')).toBe(2);
    const refused: unknown = await a.setStdin({ environmentId: 'env-1', processId: 'p-1' }, stdin(9), 1).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StaleEpochError);
    expect(refused).toMatchObject({ environmentId: 'env-1', epoch: 1, currentEpoch: 2 });
    await expect(a.recordStart({ digest: DIGEST(1), environmentId: 'env-1', processId: 'p-1', fingerprint: 'f' }, 1)).rejects.toBeInstanceOf(StaleEpochError);
    expect(a.staleRefusals).toBe(2);
    expect(b.staleRefusals).toBe(0);
    expect(await b.stdin({ environmentId: 'env-1', processId: 'p-1' })).toEqual(stdin(2));
    expect(await b.start(DIGEST(1))).toBeUndefined();
    await b.setStdin({ environmentId: 'env-1', processId: 'p-1' }, stdin(3), 2);
    expect(await a.stdin({ environmentId: 'env-1', processId: 'p-1' })).toEqual(stdin(3));
  });

  it('reads one registration, and counts the environments with a registration or a session across hosts', async () => {
    const a = await open();
    const b = await open();
    expect(await a.registration('env-1')).toBeUndefined();
    expect(await a.environmentCount()).toBe(0);
    await a.setRegistration({ id: 'env-1', registrationId: 'reg-1', accessKeyId: 'AKID1', tokenDigest: 'b'.repeat(64) });
    await b.setSession('env-2', { sessionId: 's-2', accessKeyId: 'AKID1' }, 0);
    await b.setRegistration({ id: 'env-2', registrationId: 'reg-2', accessKeyId: 'AKID1', tokenDigest: 'c'.repeat(64) });
    expect(await b.registration('env-1')).toEqual({ id: 'env-1', registrationId: 'reg-1', accessKeyId: 'AKID1', tokenDigest: 'b'.repeat(64) });
    expect(await a.environmentCount()).toBe(2);
    await b.forget('env-1');
    expect(await a.environmentCount()).toBe(1);
    expect(await a.registration('env-1')).toBeUndefined();
  });

  it('renews a lease only for the owner at its epoch, with the ttl given', async () => {
    const store = await open();
    const redis = client();
    const lease = `${environmentTag(prefix, 'env-1')}:lease`;
    expect(await store.renewLease('env-1', 'host-a', 1, 5_000)).toBe(false);
    await store.claim('env-1', 'host-a');
    expect(await store.renewLease('env-1', 'host-a', 1, 5_000)).toBe(true);
    const ttl = await redis.pttl(lease);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5_000);
    await store.claim('env-1', 'host-b');
    await redis.del(lease);
    expect(await store.renewLease('env-1', 'host-a', 1, 5_000)).toBe(false);
    expect(await store.renewLease('env-1', 'host-a', 2, 5_000)).toBe(false);
    expect(await redis.exists(lease)).toBe(0);
    expect(await store.renewLease('env-1', 'host-b', 2, 5_000)).toBe(true);
    await expect(store.renewLease('env-1', 'host-b', 2, 0)).rejects.toBeInstanceOf(TypeError);
  });

  it('restores an owner only over no epoch or a lower one, and tells a lost dataset by its boot marker, and a loss noted for a while', async () => {
    const store = await open();
    const redis = client();
    const boot = await store.bootId();
    expect(await redis.get(`${prefix}:{global}:boot`)).toBe(boot);
    expect(await store.datasetLost()).toBe(false);
    await store.claim('env-1', 'host-a');
    await store.claim('env-1', 'host-a');
    await rig.server().restart({ empty: true });
    expect(await store.datasetLost()).toBe(true);
    expect(await store.datasetLost()).toBe(false);
    expect(await store.bootId()).not.toBe(boot);
    // The loss, noted for a while: every replica reads it, one started since too; Redis lets it run out.
    expect(await store.recentLoss()).toBe(false);
    await store.noteLoss(30_000);
    expect(await store.recentLoss()).toBe(true);
    const ttl = await redis.pttl(`${prefix}:{global}:lost`);
    expect(ttl > 0 && ttl <= 30_000).toBe(true);
    await redis.del(`${prefix}:{global}:lost`);
    expect(await store.recentLoss()).toBe(false);
    // The owners rewrite what they hold: the newest epoch wins, a stale one cannot come back over it.
    expect(await store.restoreOwner('env-1', 'host-a', 2)).toBe(true);
    expect(await store.restoreOwner('env-1', 'host-a', 2)).toBe(true);
    expect(await store.restoreOwner('env-1', 'host-b', 2)).toBe(false);
    expect(await store.restoreOwner('env-1', 'host-old', 1)).toBe(false);
    expect(await store.owner('env-1')).toEqual({ owner: 'host-a', epoch: 2 });
    expect(await store.restoreOwner('env-1', 'host-c', 5)).toBe(true);
    expect(await store.owner('env-1')).toEqual({ owner: 'host-c', epoch: 5 });
    // With the signing time of its claim's upgrade: a stale upgrade's claim is refused after the rewrite too.
    expect(await store.restoreOwner('env-1', 'host-c', 6, 60_000)).toBe(true);
    expect(await store.owner('env-1')).toEqual({ owner: 'host-c', epoch: 6, signedAt: 60_000 });
    await expect(store.claim('env-1', 'host-stale', { signedAt: 59_000 })).rejects.toMatchObject({ code: 'STALE_CLAIM', currentEpoch: 6 });
    expect(await store.claim('env-1', 'host-d')).toBe(7);
  });

  it('bounds keyed starts across environments, deleting the oldest record from its own environment', async () => {
    const store = await open('counted', 2);
    const redis = client();
    for (const [n, id] of [[1, 'env-1'], [2, 'env-2'], [3, 'env-1']] as const) await store.recordStart({ digest: DIGEST(n), environmentId: id, processId: `p-${n}`, fingerprint: 'f' }, 0);
    expect(await store.start(DIGEST(1))).toBeUndefined();
    expect(await redis.exists(`${environmentTag(prefix, 'env-1')}:start:${DIGEST(1)}`)).toBe(0);
    expect((await store.start(DIGEST(2)))?.environmentId).toBe('env-2');
    expect((await store.start(DIGEST(3)))?.environmentId).toBe('env-1');
    await store.forgetStart(DIGEST(2), 0);
    expect(await redis.zrange(`${prefix}:{global}:starts`, 0, -1)).toEqual([DIGEST(3)]);
  });

  it('leaves the caller\'s connection open at close, refuses every call after it, and waits for earlier writes', async () => {
    const redis = client();
    const store = await RedisStateStore.open({ redis, prefix });
    const write = store.setStdin({ environmentId: 'env-1', processId: 'p-1' }, stdin(4), 0);
    await store.close();
    await expect(write).resolves.toBeUndefined();
    await store.close();
    for (const call of [store.registration('env-1'), store.environmentCount(), store.renewLease('env-1', 'h', 1, 10), store.restoreOwner('env-1', 'h', 1), store.bootId(), store.datasetLost(), store.noteLoss(1), store.recentLoss()]) {
      await expect(call).rejects.toBeInstanceOf(ClosedError);
    }
    await expect(store.flush()).resolves.toBeUndefined();
    expect(await redis.get(stdinKey(prefix, 'env-1', 'p-1'))).toContain('"nextWriteId":4');
  });
});
