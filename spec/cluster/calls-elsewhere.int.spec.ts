/**
 * Issue 38, what a replica answers a call that needs an environment's owner when it is not the owner: two
 * in-process replicas (`startHostServer` with `cluster`) on one real redis-server, and a scripted executor
 * on one of them. A client takes a 404 as final, so a replica never answers 404 for an environment that
 * exists elsewhere, or may:
 * - another replica owns it: 503 ENVIRONMENT_ELSEWHERE naming the owner, also on a replica that still
 *   holds a failed generation of it;
 * - Redis does not answer (SIGSTOPped): 503 STORE_UNAVAILABLE;
 * - Redis restarted empty a moment ago, before the owner wrote the environment back: 503, also on a
 *   replica started after the loss (it learns of it from the loss another replica noted in Redis).
 */
import type { SpecRedis } from '../support/redis-server';
import { startRedisServer } from '../support/redis-server';
import { HeardLines, InProcessReplicas } from './in-process-replicas';

jest.setTimeout(60_000);

const CREDENTIALS = { accessKeyId: 'AKIDCALLSELSEWHERE', secretAccessKey: 'calls-elsewhere-secret-do-not-print' };
const TOKEN = 'calls-elsewhere-operator-token-do-not-print';

describe('replicas on Redis: a call for an environment this replica does not serve', () => {
  let redis: SpecRedis;
  let replicas: InProcessReplicas;

  beforeAll(async () => {
    redis = await startRedisServer();
    replicas = new InProcessReplicas(redis, CREDENTIALS, TOKEN);
  });
  afterEach(() => {
    redis.resume();
    replicas.dropSockets();
  });
  afterAll(async () => {
    await replicas.close();
    await redis.stop();
  });

  /** A replica whose round runs every `renewMs`, its lease 3 rounds (at least 1.5 s) unless given. */
  const replica = (prefix: string, renewMs = 100, log?: (line: string) => void, leaseMs = Math.max(1_500, renewMs * 3)) =>
    replicas.replica(prefix, { renewMs, leaseMs, ...(log === undefined ? {} : { log }) });
  const join = (host: Parameters<InProcessReplicas['join']>[0], id: string): Promise<void> => replicas.join(host, id);
  const answer = (host: Parameters<InProcessReplicas['startAnswer']>[0], id: string) => replicas.startAnswer(host, id);

  it('is 503 ENVIRONMENT_ELSEWHERE while another replica owns it, and 503 STORE_UNAVAILABLE while Redis does not answer', async () => {
    const a = await replica('calls-owned');
    const b = await replica('calls-owned');
    await join(a, 'owned-1');
    expect(await answer(b, 'owned-1')).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE', retryAfter: '1' });
    expect(await answer(b, 'nowhere-1')).toMatchObject({ status: 404, code: 'ENVIRONMENT_NOT_FOUND' });
    redis.pause();
    expect(await answer(b, 'owned-1')).toEqual({ status: 503, code: 'STORE_UNAVAILABLE', retryAfter: '1' });
    redis.resume();
  });

  it('is 503 while Redis restarted empty and the owner has not written the environment back yet, never 404', async () => {
    const a = await replica('calls-lost', 60_000);
    const b = await replica('calls-lost', 60_000);
    await join(a, 'lost-1');
    await redis.restart({ empty: true });
    // Neither replica's round has run since: only the store's boot marker tells b.
    expect(await answer(b, 'lost-1')).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE', retryAfter: '1' });
  });

  it('is 503 on a replica started after Redis lost its data, while the owner has not written the environment back yet', async () => {
    const a = await replica('calls-late', 60_000);
    await join(a, 'late-1');
    // A replica that owns nothing finds the loss at its next round, and notes it in Redis for its lease
    // (a minute here: longer than the spec).
    const noting = new HeardLines();
    await replica('calls-late', 100, noting.hear, 60_000);
    await redis.restart({ empty: true });
    await noting.said(/rewrote the 0 environment\(s\)/);
    // Started after the loss: its boot marker is the new one; a's round has not run since.
    const late = await replica('calls-late', 60_000);
    expect(await answer(late, 'late-1')).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE', retryAfter: '1' });
    expect(await answer(late, 'nowhere-2')).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE', retryAfter: '1' });
  });
});
