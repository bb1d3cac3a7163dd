/**
 * A replica whose lease renewal is refused because Redis lost its data a moment before (after its round
 * looked for a loss, before it renewed: the nemesis's seed 10, two restarts without data in a row) finds
 * no owner in the store, which is not another replica's claim: it is not fenced. It writes back what it
 * owns and renews, keeps the executor's socket, and the store names it the owner again, with the
 * executor's session. In-process replica on a real redis-server, scripted executor; the loss comes in the
 * middle of the round because the spec restarts Redis inside the store's renewal call.
 */
import Redis from 'ioredis';
import type { RedisStateStore } from '../../src/store/redis/redis-state-store';
import { ownerKey, sessionKey } from '../../src/store/redis/redis-keys';
import type { SpecRedis } from '../support/redis-server';
import { startRedisServer } from '../support/redis-server';
import { within } from '../host/api/sse-reader';
import { HeardLines, InProcessReplicas } from './in-process-replicas';

jest.setTimeout(60_000);

const CREDENTIALS = { accessKeyId: 'AKIDLEASEAFTERLOSS', secretAccessKey: 'lease-after-loss-secret-do-not-print' };
const TOKEN = 'lease-after-loss-operator-token-do-not-print';
const PREFIX = 'lease-loss';
const ENV = 'kept-1';

describe('a lease renewal refused because Redis lost its data in the middle of the round', () => {
  let redis: SpecRedis;
  let replicas: InProcessReplicas;
  let reader: Redis;

  beforeAll(async () => {
    redis = await startRedisServer();
    replicas = new InProcessReplicas(redis, CREDENTIALS, TOKEN);
    reader = new Redis(redis.url);
  });
  afterAll(async () => {
    reader.disconnect();
    await replicas.close();
    await redis.stop();
  });

  it('does not let the environment go: the replica writes it back, renews, and keeps serving it', async () => {
    let armed = false;
    let lost = false;
    let restarted = (): void => undefined;
    const lossInRound = new Promise<void>((resolve) => (restarted = resolve));
    let renewed = (): void => undefined;
    const renewedAfter = new Promise<void>((resolve) => (renewed = resolve));
    // The store's renewal, once armed: Redis restarts empty first (the round looked for a loss already).
    const wrap = (store: RedisStateStore): RedisStateStore => {
      const steered = Object.create(store) as RedisStateStore;
      steered.renewLease = async (...args: Parameters<RedisStateStore['renewLease']>): Promise<boolean> => {
        if (armed) {
          armed = false;
          await redis.restart({ empty: true });
          lost = true;
          restarted();
        }
        const answer = await store.renewLease(...args);
        if (lost && answer) renewed();
        return answer;
      };
      return steered;
    };
    const heard = new HeardLines();
    // A lease longer than the spec: only a refused renewal, never one that ran out, could let it go.
    const replica = await replicas.replica(PREFIX, { renewMs: 100, leaseMs: 60_000, wrap, log: heard.hear });
    await replicas.join(replica, ENV);
    armed = true;
    await within(lossInRound, 20_000, 'the restart inside a renewal');
    await within(heard.said(/rewrote the \d+ environment\(s\)/), 20_000, 'the write-back');
    expect(heard.lines.filter((line) => /let go|another replica owns|could not be renewed|rewrote/.test(line))).toEqual([
      expect.stringMatching(/rewrote the 1 environment\(s\) this replica owns/),
    ]);
    await within(renewedAfter, 20_000, 'a renewal after the write-back');
    expect(replica.environment(ENV)).toMatchObject({ state: 'connected', generation: 1 });
    expect(await reader.hget(ownerKey(PREFIX, ENV), 'owner')).toBe(replica.instanceId);
    expect(await reader.hget(sessionKey(PREFIX, ENV), 'sessionId')).toBe(`session-${ENV}`);
  });
});
