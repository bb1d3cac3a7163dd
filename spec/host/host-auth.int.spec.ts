/**
 * Who may join a host: a wrong secret (the real executor), a missing or stale signature, a wrong token
 * or another environment's token each get 401 and create no environment; limits answer 429/503, never
 * 401/404 (which would make a legitimate executor exit and kill its processes).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type WebSocket from 'ws';
import { ConfigError } from '../../src/errors';
import type { HostServer, HostServerOptions } from '../../src/host/host-options';
import { startHostServer } from '../../src/host/host-server';
import { startDirectExecutor, trackForCleanup } from '../support/executor';
import type { Registration, UpgradeOutcome } from './signed-client';
import { register, registerOk, upgrade } from './signed-client';

const CREDENTIALS = { accessKeyId: 'AKIDAUTHSPEC', secretAccessKey: 'auth-spec-secret-do-not-print' };
const TEN_MINUTES_AGO = (): Date => new Date(Date.now() - 10 * 60_000);

const startHost = async (options: Partial<HostServerOptions> = {}, log: string[] = []): Promise<HostServer> =>
  trackForCleanup(await startHostServer({ credentials: new Map([[CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey]]), log: (line) => log.push(line), ...options }));

const statusOf = (outcome: UpgradeOutcome): number | 'open' => ('status' in outcome ? outcome.status : 'open');
const tokenOf = (registration: Registration): string => new URL(registration.url).searchParams.get('token') ?? '';

/** Closes an accepted spec socket and waits for the close. */
function closeSocket(socket: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    socket.once('close', () => resolve());
    socket.terminate();
  });
}

describe('host server: who may join', () => {
  const log: string[] = [];
  let host: HostServer;
  // Spies call through; what they saw is read at the end.
  const spies: jest.SpyInstance[] = [];
  beforeAll(async () => {
    spies.push(jest.spyOn(process.stdout, 'write'), jest.spyOn(process.stderr, 'write'));
    host = await startHost({}, log);
  });
  afterAll(() => {
    for (const spy of spies) spy.mockRestore();
  });

  it('refuses the real executor signing with a wrong secret: 401, it exits, nothing is created', async () => {
    const executor = await startDirectExecutor({ remoteUrl: host.url, environmentId: 'wrong-secret', credentials: { ...CREDENTIALS, secretAccessKey: 'not-the-secret' } });
    expect(await executor.exited).toEqual({ code: 1, signal: null });
    expect(executor.stderrLines().join('\n')).toContain('401');
    expect(log).toContain('registration for wrong-secret: refused (401, signature mismatch)');
    expect(await firstValueFrom(host.environments$)).toEqual([]);
  });

  it('refuses a registration without a signature, with a stale one, or from an unknown key: 401', async () => {
    expect((await register(host.url, 'env-x', CREDENTIALS, { unsigned: true })).status).toBe(401);
    expect((await register(host.url, 'env-x', CREDENTIALS, { signedAt: TEN_MINUTES_AGO() })).status).toBe(401);
    expect((await register(host.url, 'env-x', { accessKeyId: 'AKIDUNKNOWN', secretAccessKey: CREDENTIALS.secretAccessKey })).status).toBe(401);
    expect((await register(host.url, 'env-x', CREDENTIALS, { region: 'eu-west-1' })).status).toBe(401);
    expect(await firstValueFrom(host.environments$)).toEqual([]);
  });

  it('refuses an upgrade with a wrong token, another environment’s token, or a missing or stale signature: 401', async () => {
    const a = await registerOk(host.url, 'env-a', CREDENTIALS);
    const b = await registerOk(host.url, 'env-b', CREDENTIALS);
    expect(a).toMatchObject({ environment_id: 'env-a', transport: 'direct_jsonrpc_v1', url: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+\//) });
    const wrongToken = a.url.replace(tokenOf(a), 'A'.repeat(43));
    const aTokenOnB = b.url.replace(b.registration_id, a.registration_id).replace(tokenOf(b), tokenOf(a));
    const bTokenOnA = a.url.replace(tokenOf(a), tokenOf(b));
    const noToken = a.url.replace(/\?.*$/, '');
    const outcomes = await Promise.all([
      upgrade(wrongToken, CREDENTIALS),
      upgrade(aTokenOnB, CREDENTIALS),
      upgrade(bTokenOnA, CREDENTIALS),
      upgrade(noToken, CREDENTIALS),
      upgrade(a.url, CREDENTIALS, { unsigned: true }),
      upgrade(a.url, CREDENTIALS, { signedAt: TEN_MINUTES_AGO() }),
      upgrade(a.url, { ...CREDENTIALS, secretAccessKey: 'not-the-secret' }),
      upgrade(`${host.url.replace('http', 'ws')}/`, CREDENTIALS),
    ]);
    expect(outcomes.map(statusOf)).toEqual([401, 401, 401, 401, 401, 401, 401, 401]);
    expect(await firstValueFrom(host.environments$)).toEqual([]);
  });

  it('answers a superseded registration with 409 (the executor re-registers) and accepts the latest', async () => {
    const first = await registerOk(host.url, 'env-c', CREDENTIALS);
    const latest = await registerOk(host.url, 'env-c', CREDENTIALS);
    expect(statusOf(await upgrade(first.url, CREDENTIALS))).toBe(409);
    const accepted = await upgrade(latest.url, CREDENTIALS);
    if (!('socket' in accepted)) throw new Error(`upgrade refused with ${accepted.status}`);
    const initialize = await accepted.firstMessage;
    expect(JSON.parse(initialize)).toMatchObject({ method: 'initialize' });
    await closeSocket(accepted.socket);
    await firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === 'env-c' && e.state === 'failed'))));
  });

  it('serves a readiness probe (HEAD alike, 405 with Allow for other methods), and 404 for anything else that is not an upgrade', async () => {
    expect((await fetch(`${host.url}/readyz`)).status).toBe(200);
    const head = await fetch(`${host.url}/readyz`, { method: 'HEAD' });
    expect({ status: head.status, type: head.headers.get('content-type'), body: await head.text() }).toEqual({ status: 200, type: 'application/json', body: '' });
    const post = await fetch(`${host.url}/readyz`, { method: 'POST' });
    expect({ status: post.status, allow: post.headers.get('allow'), type: post.headers.get('content-type') }).toEqual({ status: 405, allow: 'GET, HEAD', type: 'application/problem+json' });
    expect((await fetch(`${host.url}/cloud/environment/env-a/direct/connect/x`)).status).toBe(404);
    expect((await fetch(`${host.url}/cloud/environment/env-a/direct/register`)).status).toBe(405);
  });

  it('never wrote the secret, a token or a signature', () => {
    const all = [...log, ...spies.flatMap((spy) => spy.mock.calls.map((call: unknown[]) => String(call[0])))].join('\n');
    expect(all).toContain('refused (401');
    expect(all).not.toContain(CREDENTIALS.secretAccessKey);
    expect(all).not.toMatch(/token=|Signature=|[0-9a-f]{64}|[A-Za-z0-9_-]{43}/);
  });
});

describe('host server limits', () => {
  it('answers 429 over the handshake rate, for registrations and upgrades alike', async () => {
    const host = await startHost({ maxHandshakesPerSecond: 0.01, handshakeBurst: 2 });
    const registration = await registerOk(host.url, 'rate-1', CREDENTIALS);
    expect((await register(host.url, 'rate-1', CREDENTIALS, { unsigned: true })).status).toBe(401);
    expect((await register(host.url, 'rate-1', CREDENTIALS)).status).toBe(429);
    expect(statusOf(await upgrade(registration.url, CREDENTIALS))).toBe(429);
    expect(statusOf(await upgrade(registration.url, CREDENTIALS, { unsigned: true }))).toBe(429);
    // The readiness probe is no handshake: it spends none of that budget and is answered past it.
    expect((await fetch(`${host.url}/readyz`)).status).toBe(200);
  });

  it('answers 503 beyond the environment limit, and still re-registers a known one', async () => {
    const host = await startHost({ maxEnvironments: 1 });
    await registerOk(host.url, 'cap-1', CREDENTIALS);
    expect((await register(host.url, 'cap-2', CREDENTIALS)).status).toBe(503);
    expect((await register(host.url, 'cap-1', CREDENTIALS)).status).toBe(200);
  });

  it('closes a socket that sends a frame over the limit (1009)', async () => {
    const host = await startHost({ maxFrameBytes: 1024 });
    const registration = await registerOk(host.url, 'frame-1', CREDENTIALS);
    const accepted = await upgrade(registration.url, CREDENTIALS);
    if (!('socket' in accepted)) throw new Error(`upgrade refused with ${accepted.status}`);
    const closed = new Promise<number>((resolve) => accepted.socket.once('close', (code) => resolve(code)));
    accepted.socket.send('x'.repeat(4096));
    expect(await closed).toBe(1009);
    await firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === 'frame-1' && e.state === 'failed'))));
  });

  it('refuses plain HTTP off loopback, and serves https/wss with a certificate', async () => {
    await expect(startHostServer({ credentials: new Map(), host: '0.0.0.0' })).rejects.toThrow('refusing plain HTTP');
    await expect(startHostServer({ credentials: new Map(), host: '0.0.0.0' })).rejects.toBeInstanceOf(ConfigError);
    const dir = mkdtempSync(join(tmpdir(), 'exec-rx-tls-'));
    try {
      const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
      const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'];
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', ...subject], { stdio: 'ignore' });
      const ca = readFileSync(cert, 'utf8');
      const host = await startHost({ tls: { cert: ca, key: readFileSync(key) } });
      expect(host.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const { status, body } = await register(host.url, 'tls-1', CREDENTIALS, { ca });
      expect(status).toBe(200);
      expect((body as Registration).url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/cloud\/environment\/tls-1\/direct\/connect\/reg-/);
      expect(host.joinCommand('tls-1')).toBe(
        `AWS_ACCESS_KEY_ID=<access-key-id> AWS_SECRET_ACCESS_KEY=<secret-access-key> codex exec-server --remote ${host.url} --remote-transport direct --aws-sigv4 --aws-region us-east-1 --environment-id tls-1`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

