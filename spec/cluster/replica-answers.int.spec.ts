/**
 * Issue 33, what an executor must never be told, by replica state (the README's table, "Replicas on
 * Redis"): two in-process replicas (`startHostServer` with `cluster`) on one real redis-server, and a
 * scripted executor signing its registration and upgrade as the real one does. An executor exits (and
 * kills its processes) on a 401, another 4xx, or a failed registration after a 409; so:
 * - a registration issued by one replica is taken by the other's upgrade (the balancer may split them);
 * - no replica refuses a known environment's registration, and the environment limit counts the cluster;
 * - Redis unreachable (SIGSTOPped: its sockets stay open), or a lease in doubt: upgrades get 503, never
 *   409 or 401;
 * - a draining replica reports not ready on `/readyz` first and keeps answering registrations.
 */
import type WebSocket from 'ws';
import type { HostServer } from '../../src/host/host-options';
import type { SpecRedis } from '../support/redis-server';
import { startRedisServer } from '../support/redis-server';
import type { Registration, UpgradeOutcome } from '../host/signed-client';
import { register, registerOk, upgrade } from '../host/signed-client';
import type { ReplicaOptions } from './in-process-replicas';
import { HeardLines, InProcessReplicas } from './in-process-replicas';

const CREDENTIALS = { accessKeyId: 'AKIDREPLICAANSWERS', secretAccessKey: 'replica-answers-secret-do-not-print' };
const TOKEN = 'replica-answers-operator-token-do-not-print';
const statusOf = (outcome: UpgradeOutcome): number | 'open' => ('status' in outcome ? outcome.status : 'open');
/** The url of `registration` as the other replica serves it (a balancer's Host is the same for both: here each replica has its own). */
const on = (host: HostServer, registration: Registration): string => registration.url.replace(/^ws:\/\/[^/]+/, host.url.replace(/^http/, 'ws'));

function closeSocket(outcome: UpgradeOutcome): Promise<void> {
  if (!('socket' in outcome)) return Promise.resolve();
  const socket: WebSocket = outcome.socket;
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.terminate();
  });
}

describe('replicas on Redis: what an executor is answered, by replica state', () => {
  let redis: SpecRedis;
  let replicas: InProcessReplicas;
  /** Every replica's log lines (they log into one). */
  const heard = new HeardLines();

  beforeAll(async () => {
    redis = await startRedisServer();
    replicas = new InProcessReplicas(redis, CREDENTIALS, TOKEN);
  });
  afterAll(async () => {
    await replicas.close();
    await redis.stop();
  });

  /** A replica on the spec's Redis, under `prefix` (each test its own cluster), logging into `heard`. */
  const replica = (prefix: string, options: Omit<ReplicaOptions, 'log' | 'wrap'> = {}): Promise<HostServer> => replicas.replica(prefix, { ...options, log: heard.hear });

  it("takes a registration another replica issued: the upgrade opens, no 409, no 401", async () => {
    const a = await replica('answers-split');
    const b = await replica('answers-split');
    const registration = await registerOk(a.url, 'split-1', CREDENTIALS);
    const opened = await upgrade(on(b, registration), CREDENTIALS);
    expect(statusOf(opened)).toBe('open');
    await closeSocket(opened);
  });

  it('never refuses a known environment\'s registration on any replica, and counts the limit over the cluster', async () => {
    const a = await replica('answers-limit', { maxEnvironments: 1 });
    const b = await replica('answers-limit', { maxEnvironments: 1 });
    expect((await register(a.url, 'known-1', CREDENTIALS)).status).toBe(200);
    // Known: registered through the other replica.
    expect((await register(b.url, 'known-1', CREDENTIALS)).status).toBe(200);
    // The cluster holds one environment, its limit: a new one gets 503 (Retry-After), on either replica.
    expect((await register(b.url, 'new-2', CREDENTIALS)).status).toBe(503);
    expect((await register(a.url, 'new-2', CREDENTIALS)).status).toBe(503);
  });

  it('answers upgrades 503 while Redis does not answer, never 409 or 401, and lets them in once it does', async () => {
    const a = await replica('answers-down');
    const b = await replica('answers-down');
    const registration = await registerOk(a.url, 'down-1', CREDENTIALS);
    redis.pause();
    try {
      expect(statusOf(await upgrade(registration.url, CREDENTIALS))).toBe(503);
      expect(statusOf(await upgrade(on(b, registration), CREDENTIALS))).toBe(503);
    } finally {
      redis.resume();
    }
    const opened = await upgrade(on(b, registration), CREDENTIALS);
    expect(statusOf(opened)).toBe('open');
    await closeSocket(opened);
  });

  it('answers upgrades 503 while its lease is in doubt (not renewed for longer than it lasts)', async () => {
    const a = await replica('answers-lease', { leaseMs: 400, renewMs: 100 });
    const registration = await registerOk(a.url, 'lease-1', CREDENTIALS);
    const unanswered = heard.next(/the shared store does not answer/);
    redis.pause();
    try {
      // The renewal that hears nothing says so once (its command timed out, 1 s, past the 400 ms lease).
      await unanswered;
      expect(statusOf(await upgrade(registration.url, CREDENTIALS))).toBe(503);
      expect(heard.lines).toContain('upgrade: its lease is in doubt (the shared store does not answer) (503, the executor retries)');
    } finally {
      redis.resume();
    }
  });

  it('while draining: /readyz says draining, registrations are still answered 200, upgrades get 503', async () => {
    const a = await replica('answers-drain', { drainDelayMs: 60_000 });
    const draining = a.drain();
    const ready = await fetch(`${a.url}/readyz`);
    expect({ status: ready.status, text: await ready.text() }).toMatchObject({ status: 503, text: expect.stringContaining('draining') });
    const answered = await register(a.url, 'drain-1', CREDENTIALS);
    expect(answered.status).toBe(200);
    expect(statusOf(await upgrade((answered.body as Registration).url, CREDENTIALS))).toBe(503);
    expect(heard.lines).toContain('upgrade: the replica is draining (503, the executor retries)');
    await a.close();
    await draining.catch(() => undefined);
  });
});
