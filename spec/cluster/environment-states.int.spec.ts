/**
 * Issue 38, what a replica shows of the environments another replica owns, and the room it makes for a
 * new one under the cluster's limit: two in-process replicas (`startHostServer` with `cluster`) on one
 * real redis-server, and executors scripted on the signed upgrade (they answer `initialize`, or not).
 * - The other replica lists, overviews and pages an environment with its owner's real state as it changes
 *   (connected with the owner's generation, disconnected, failed with its error), where it showed
 *   `connected`, generation 0, whatever it was; `offline` once the owner's lease ran out (the owner
 *   stopped), a failed one staying `failed`. An environment whose executor never answered `initialize` is
 *   never claimed (issue 38), so it has no state elsewhere.
 * - At the limit, a replica evicts an environment that no replica serves and whose registration is older
 *   than the stale bound, wherever it was registered; a served one never.
 * Each change is awaited as the overview stream's snapshot that shows it (the replica re-reads the cluster
 * every 2 s and sends what changed).
 */
import Redis from 'ioredis';
import { filter, firstValueFrom } from 'rxjs';
import type WebSocket from 'ws';
import { OperatorTokens } from '../../src/host/api/operator-tokens';
import type { HostServer } from '../../src/host/host-options';
import { startHostServer } from '../../src/host/host-server';
import { MemoryLogStore } from '../../src/store/memory/memory-log-store';
import { registrationKey } from '../../src/store/redis/redis-keys';
import { RedisStateStore } from '../../src/store/redis/redis-state-store';
import type { EnvironmentResource, Overview } from '../../src/wire/operator-api';
import { trackForCleanup } from '../support/executor';
import type { SpecRedis } from '../support/redis-server';
import { startRedisServer } from '../support/redis-server';
import { ApiClient, paths } from '../host/api/api-client';
import { within as bounded } from '../host/api/sse-reader';
import type { EventStream } from '../host/api/api-client';
import { register, registerOk, upgrade } from '../host/signed-client';

jest.setTimeout(60_000);

const CREDENTIALS = { accessKeyId: 'AKIDENVSTATES', secretAccessKey: 'environment-states-secret-do-not-print' };
const TOKEN = 'environment-states-operator-token-do-not-print';

describe('replicas on Redis: the owner\'s state of an environment on every replica, and eviction across the cluster', () => {
  let redis: SpecRedis;
  const connections: Redis[] = [];
  const sockets: WebSocket[] = [];
  const streams: EventStream[] = [];
  const log: string[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterEach(async () => {
    await Promise.all(streams.splice(0).map((stream) => stream.close()));
    for (const socket of sockets.splice(0)) socket.terminate();
  });
  afterAll(async () => {
    for (const connection of connections) connection.disconnect();
    await redis.stop();
  });

  /** A connection to the spec's Redis, dropped at the end. */
  const connect = (): Redis => {
    const connection = new Redis(redis.url, { commandTimeout: 2_000, maxRetriesPerRequest: 1 });
    connections.push(connection);
    return connection;
  };

  /** A replica on the spec's Redis under `prefix` (each test its own cluster), with the operator API. */
  async function replica(prefix: string, options: { readonly maxEnvironments?: number; readonly manager?: { readonly recoveryDeadlineMs: number } } = {}): Promise<HostServer> {
    const state = await RedisStateStore.open({ redis: connect(), prefix, epochs: 'clock' });
    return trackForCleanup(
      await startHostServer({
        credentials: new Map([[CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey]]),
        log: (line) => log.push(line),
        cluster: { state, id: `cluster-${prefix}`, leaseMs: 1_500, renewMs: 100 },
        logStore: new MemoryLogStore(),
        operator: { tokens: new OperatorTokens([TOKEN]) },
        ...options,
      }),
    );
  }

  /** A scripted executor of `id` on `host`: registered and upgraded; it answers `initialize` when `answers`. */
  async function join(host: HostServer, id: string, answers: boolean): Promise<WebSocket> {
    const registration = await registerOk(host.url, id, CREDENTIALS);
    const opened = await upgrade(registration.url, CREDENTIALS);
    if (!('socket' in opened)) throw new Error(`upgrade of ${id} refused: ${opened.status}`);
    sockets.push(opened.socket);
    if (answers) {
      const initialize = JSON.parse(await opened.firstMessage) as { id: number; method: string };
      expect(initialize.method).toBe('initialize');
      opened.socket.send(JSON.stringify({ id: initialize.id, result: { sessionId: `session-${id}` } }));
    }
    return opened.socket;
  }

  /** `host`'s overview stream; `shows(id, match)` resolves with the first snapshot in which environment `id` matches. */
  async function overviewOf(host: HostServer): Promise<{ shows: (id: string, match: Partial<EnvironmentResource>) => Promise<EnvironmentResource> }> {
    const opened = await new ApiClient(host.url, TOKEN).events(paths.overview);
    if (!('stream' in opened)) throw new Error(`overview refused: ${opened.refused.status}`);
    streams.push(opened.stream);
    const find = (data: string, id: string): EnvironmentResource | undefined => (JSON.parse(data) as Overview).environments.find((e) => e.id === id);
    return {
      shows: async (id, match) => {
        const matches = (data: string): boolean => {
          const found = find(data, id);
          return found !== undefined && Object.entries(match).every(([key, value]) => JSON.stringify(found[key as keyof EnvironmentResource]) === JSON.stringify(value));
        };
        const event = await opened.stream.next((e) => e.event === 'overview' && matches(e.data), 20_000);
        const found = find(event.data, id);
        if (found === undefined) throw new Error(`no ${id} in the overview`);
        return found;
      },
    };
  }

  it("shows the owner's state as it changes: connected with its generation, disconnected, failed with its error; offline once its lease ran out", async () => {
    // A lost connection fails its environment after 5 s here (25 s by default): two of b's re-reads see it disconnected.
    const a = await replica('states-shown', { manager: { recoveryDeadlineMs: 5_000 } });
    const b = await replica('states-shown');
    const onB = await overviewOf(b);
    const pageOnB = async (id: string): Promise<unknown> => (await new ApiClient(b.url, TOKEN).get(paths.environment(id))).body;

    await join(a, 'live-1', true);
    const live = await onB.shows('live-1', { state: 'connected' });
    expect(live).toMatchObject({ generation: 1, error: null });
    expect(await pageOnB('live-1')).toMatchObject({ id: 'live-1', state: 'connected', generation: 1 });

    // An executor that never answers `initialize` (a socket it gave up on) is never claimed: the owner's
    // starting generation fails there alone, and the other replica has no state of it to show.
    const silent = await join(a, 'silent-1', false);
    silent.terminate();
    await bounded(firstValueFrom(a.environments$.pipe(filter((list) => list.some((e) => e.id === 'silent-1' && e.state === 'failed')))), 20_000, 'silent-1 failed on a');
    expect((await new ApiClient(b.url, TOKEN).get(paths.environment('silent-1'))).status).toBe(404);

    // One that answered and then lost its socket: disconnected, then failed once its recovery ran out.
    const lost = await join(a, 'fail-1', true);
    await onB.shows('fail-1', { state: 'connected' });
    lost.terminate();
    await onB.shows('fail-1', { state: 'disconnected' });
    const failed = await onB.shows('fail-1', { state: 'failed' });
    const onOwner = (await new ApiClient(a.url, TOKEN).get(paths.environment('fail-1'))).body as EnvironmentResource;
    expect(onOwner).toMatchObject({ state: 'failed', generation: 1 });
    expect({ generation: failed.generation, error: failed.error }).toEqual({ generation: 1, error: onOwner.error });
    expect(failed.error?.code).toEqual(expect.any(String));

    // The owner stops: nobody renews its lease, and once it ran out its connected environment is offline.
    await a.close();
    expect(await onB.shows('live-1', { state: 'offline' })).toMatchObject({ generation: 0, error: null });
    expect(await pageOnB('live-1')).toMatchObject({ state: 'offline' });
    expect(await pageOnB('fail-1')).toMatchObject({ state: 'failed', generation: 1, error: onOwner.error });
  });

  it('evicts, at the limit, an environment no replica serves whose registration is stale, on any replica; a served one never', async () => {
    const a = await replica('states-evict', { maxEnvironments: 2 });
    const b = await replica('states-evict', { maxEnvironments: 2 });
    const onA = await overviewOf(a);
    const state = await RedisStateStore.open({ redis: connect(), prefix: 'states-evict' });
    const age = async (id: string): Promise<void> => void (await connect().hincrby(registrationKey('states-evict', id), 'registeredAt', -60_000));

    await join(a, 'served-1', true);
    await onA.shows('served-1', { state: 'connected' });
    await registerOk(a.url, 'stale-1', CREDENTIALS); // never upgraded: no replica owns it
    await age('served-1');
    await age('stale-1');
    expect(await state.environmentCount()).toBe(2);

    // The cluster is at its limit; replica b never saw stale-1, and makes room by evicting it.
    expect((await register(b.url, 'new-1', CREDENTIALS)).status).toBe(200);
    expect(log).toContain(`environment stale-1: evicted to make room for new-1 (no replica served it, registered over 30 s ago)`);
    expect(await state.registration('stale-1')).toBeUndefined();
    expect(await state.registration('served-1')).toBeDefined();
    expect(await state.environmentCount()).toBe(2);
    // Nothing left to evict: the old one is served, the new one is young.
    expect((await register(a.url, 'new-2', CREDENTIALS)).status).toBe(503);
    expect((await register(b.url, 'new-2', CREDENTIALS)).status).toBe(503);
    await state.close();
  });
});
