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
import Redis from 'ioredis';
import { filter, firstValueFrom } from 'rxjs';
import type WebSocket from 'ws';
import { OperatorTokens } from '../../src/host/api/operator-tokens';
import type { HostServer } from '../../src/host/host-options';
import { startHostServer } from '../../src/host/host-server';
import { MemoryLogStore } from '../../src/store/memory/memory-log-store';
import { RedisStateStore } from '../../src/store/redis/redis-state-store';
import { trackForCleanup } from '../support/executor';
import type { SpecRedis } from '../support/redis-server';
import { startRedisServer } from '../support/redis-server';
import { ApiClient, paths } from '../host/api/api-client';
import { registerOk, upgrade } from '../host/signed-client';

jest.setTimeout(60_000);

const CREDENTIALS = { accessKeyId: 'AKIDCALLSELSEWHERE', secretAccessKey: 'calls-elsewhere-secret-do-not-print' };
const TOKEN = 'calls-elsewhere-operator-token-do-not-print';
const START = { argv: ['true'] };

describe('replicas on Redis: a call for an environment this replica does not serve', () => {
  let redis: SpecRedis;
  const connections: Redis[] = [];
  const sockets: WebSocket[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterEach(() => {
    redis.resume();
    for (const socket of sockets.splice(0)) socket.terminate();
  });
  afterAll(async () => {
    for (const connection of connections) connection.disconnect();
    await redis.stop();
  });

  /**
   * A replica under `prefix` whose leases are renewed (and a lost dataset found) only every `renewMs`, its
   * lease `leaseMs` (3 rounds, at least 1.5 s, unless given); `log` hears its lines.
   */
  async function replica(prefix: string, renewMs = 100, log: (line: string) => void = () => undefined, leaseMs = Math.max(1_500, renewMs * 3)): Promise<HostServer> {
    const connection = new Redis(redis.url, { commandTimeout: 1_000, maxRetriesPerRequest: 1 });
    connections.push(connection);
    const state = await RedisStateStore.open({ redis: connection, prefix, epochs: 'clock' });
    return trackForCleanup(
      await startHostServer({
        credentials: new Map([[CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey]]),
        log,
        cluster: { state, id: `cluster-${prefix}`, leaseMs, renewMs },
        logStore: new MemoryLogStore(),
        operator: { tokens: new OperatorTokens([TOKEN]) },
      }),
    );
  }

  /** A scripted executor of `id` on `host`, answering `initialize` (so `host` claims it). */
  async function join(host: HostServer, id: string): Promise<void> {
    const registration = await registerOk(host.url, id, CREDENTIALS);
    const opened = await upgrade(registration.url, CREDENTIALS);
    if (!('socket' in opened)) throw new Error(`upgrade of ${id} refused: ${opened.status}`);
    sockets.push(opened.socket);
    const initialize = JSON.parse(await opened.firstMessage) as { id: number };
    opened.socket.send(JSON.stringify({ id: initialize.id, result: { sessionId: `session-${id}` } }));
    await firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === id && e.state === 'connected'))));
  }

  const answer = async (host: HostServer, id: string): Promise<{ status: number; code: string | undefined; retryAfter: string | undefined }> => {
    const response = await new ApiClient(host.url, TOKEN).post(paths.processes(id), START);
    return { status: response.status, code: (response.body as { code?: string }).code, retryAfter: response.headers['retry-after'] };
  };

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
    let noticed = (): void => undefined;
    const noted = new Promise<void>((resolve) => (noticed = resolve));
    // A replica that owns nothing finds the loss at its next round, and notes it in Redis for its lease
    // (a minute here: longer than the spec).
    const hears = (line: string): void => {
      if (line.includes('rewrote the 0 environment(s)')) noticed();
    };
    await replica('calls-late', 100, hears, 60_000);
    await redis.restart({ empty: true });
    await noted;
    // Started after the loss: its boot marker is the new one; a's round has not run since.
    const late = await replica('calls-late', 60_000);
    expect(await answer(late, 'late-1')).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE', retryAfter: '1' });
    expect(await answer(late, 'nowhere-2')).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE', retryAfter: '1' });
  });
});
