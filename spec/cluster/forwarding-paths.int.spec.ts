/**
 * Issue 39, how a forward reaches the owner and what a client is told when it cannot: in-process replicas
 * (`startHostServer` with `cluster.forwarding`) serving TLS with one self-signed certificate for 127.0.0.1,
 * on one real redis-server. The owner of an environment is named in Redis by a claim (no executor: the
 * owner answers the forwarded call itself, `ENVIRONMENT_NOT_FOUND` since none joined it there).
 * - over https, the forwarding replica checks the owner's certificate against `--internal-ca`;
 * - without that CA it cannot check it: 503 `ENVIRONMENT_ELSEWHERE` naming the certificate's error;
 * - an owner whose url refuses the connection: 503 `ENVIRONMENT_ELSEWHERE` with `Retry-After`;
 * - an owner that took the call and lost the connection before it answered: 502 `FORWARD_FAILED`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { FORWARDED_BY_HEADER } from '../../src/host/api/forwarding';
import { ReplicaKeys } from '../../src/host/api/replica-keys';
import type { HostServer } from '../../src/host/host-options';
import type { HostLogger, LogFields } from '../../src/host/host-logger';
import { RedisStateStore } from '../../src/store/redis/redis-state-store';
import { paths } from '../host/api/api-client';
import type { SpecRedis } from '../support/redis-server';
import { startRedisServer } from '../support/redis-server';
import { InProcessReplicas } from './in-process-replicas';

jest.setTimeout(60_000);

const CREDENTIALS = { accessKeyId: 'AKIDFORWARDPATHS', secretAccessKey: 'forward-paths-secret-do-not-print' };
const TOKEN = 'forward-paths-operator-token-do-not-print';
const PREFIX = 'forward-paths';
const ENV = 'paths-1';

/** A call's answer. */
interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: { readonly code?: string; readonly detail?: string };
}

/** POSTs `path` on `base` (https, trusting `ca`) with the operator token, from `localAddress` (default: the system's choice). */
function post(base: string, path: string, ca: Buffer, localAddress?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const from = localAddress === undefined ? {} : { localAddress };
    const req = request(`${base}${path}`, { method: 'POST', ca, agent: false, headers: { authorization: `Bearer ${TOKEN}` }, ...from }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Answer['body'] }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A TCP server that reads a request, then drops the connection without a word; `close()` stops it. */
async function droppingServer(): Promise<{ readonly url: string; readonly took: Promise<void>; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  let took = (): void => undefined;
  const tookCall = new Promise<void>((resolve) => (took = resolve));
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.once('data', () => {
      took();
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    took: tookCall,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on (bound, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('forwarding between replicas: TLS, and an owner that cannot be reached', () => {
  let redis: SpecRedis;
  let replicas: InProcessReplicas;
  let work: string;
  let cert: Buffer;
  let key: Buffer;
  let connection: Redis;
  let store: RedisStateStore;
  const keys = new ReplicaKeys([randomBytes(32).toString('base64')]);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-forward-tls-'));
    const certFile = join(work, 'cert.pem');
    const keyFile = join(work, 'key.pem');
    const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', ...subject], { stdio: 'ignore' });
    cert = readFileSync(certFile);
    key = readFileSync(keyFile);
    redis = await startRedisServer();
    replicas = new InProcessReplicas(redis, CREDENTIALS, TOKEN);
    connection = new Redis(redis.url, { commandTimeout: 1_000, maxRetriesPerRequest: 1 });
    store = await RedisStateStore.open({ redis: connection, prefix: PREFIX });
  });
  afterAll(async () => {
    await replicas.close();
    connection.disconnect();
    await redis.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** A replica serving TLS whose round does not run during the spec (what it advertised at its start stays, or what the spec says instead). */
  const replica = (ca: Buffer | undefined): Promise<HostServer> =>
    replicas.replica(PREFIX, { renewMs: 60_000, leaseMs: 120_000, tls: { cert, key }, forwarding: { keys, ...(ca === undefined ? {} : { ca }) } });

  /** Makes `owner` the owner of {@link ENV} in Redis; resolves with its replica id. */
  async function own(owner: HostServer): Promise<string> {
    // Asked on an environment no replica owns, so that the answer is its own (not forwarded).
    const id = (await post(owner.url, `${paths.process('owned-by-none', 'none')}/terminate`, cert)).headers['exec-rx-host-replica'];
    if (typeof id !== 'string') throw new Error('the owner named no replica');
    await store.claim(ENV, id);
    return id;
  }

  it('forwards over https, checking the owner certificate against --internal-ca', async () => {
    const owner = await replica(cert);
    const other = await replica(cert);
    const ownerId = await own(owner);
    const otherId = (await post(other.url, `${paths.process('owned-by-none', 'p')}/terminate`, cert)).headers['exec-rx-host-replica'];
    const answer = await post(other.url, `${paths.process(ENV, 'p1')}/terminate`, cert);
    // The owner answered (no executor joined it there), through the replica the call was sent to.
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 404, code: 'ENVIRONMENT_NOT_FOUND' });
    expect(answer.headers['exec-rx-host-replica']).toBe(ownerId);
    expect(answer.headers[FORWARDED_BY_HEADER]).toBe(otherId);
    expect(otherId).not.toBe(ownerId);
  });

  it("records the act in the owner's audit trail with the client's address and the forwarding replica; the forwarder's at debug", async () => {
    const heard: { level: string; fields: LogFields; msg: string }[] = [];
    const audit = (who: string): HostLogger => ({
      debug: (fields, msg) => void heard.push({ level: `${who} debug`, fields, msg }),
      info: (fields, msg) => void heard.push({ level: `${who} info`, fields, msg }),
      warn: (fields, msg) => void heard.push({ level: `${who} warn`, fields, msg }),
      error: (fields, msg) => void heard.push({ level: `${who} error`, fields, msg }),
    });
    const owner = await replicas.replica(PREFIX, { renewMs: 60_000, leaseMs: 120_000, tls: { cert, key }, forwarding: { keys, ca: cert }, audit: audit('owner') });
    const other = await replicas.replica(PREFIX, { renewMs: 60_000, leaseMs: 120_000, tls: { cert, key }, forwarding: { keys, ca: cert }, audit: audit('other') });
    const ownerId = await own(owner);
    heard.length = 0;
    // The client is 127.0.0.2; the forwarding replica reaches the owner from 127.0.0.1.
    const answer = await post(other.url, `${paths.process(ENV, 'p1')}/terminate`, cert, '127.0.0.2');
    expect(answer.status).toBe(404);
    const otherId = answer.headers[FORWARDED_BY_HEADER];
    // Each replica records its line once its own answer ended: the client may have the answer first.
    while (heard.length < 2) await new Promise((resolve) => setImmediate(resolve));
    heard.sort((x, y) => x.level.localeCompare(y.level));
    expect(heard.map((h) => ({ level: h.level, act: h.fields['act'], remoteAddress: h.fields['remoteAddress'], forwardedBy: h.fields['forwardedBy'], forwardedTo: h.fields['forwardedTo'] }))).toEqual([
      { level: 'other debug', act: 'terminate', remoteAddress: '127.0.0.2', forwardedBy: undefined, forwardedTo: ownerId },
      { level: 'owner warn', act: 'terminate', remoteAddress: '127.0.0.2', forwardedBy: otherId, forwardedTo: undefined },
    ]);
    expect(heard[1]?.msg).toBe(`audit: terminate p1 in ${ENV} by token-1 (forwarded by ${String(otherId)}): 404 ENVIRONMENT_NOT_FOUND`);
  });

  it('is 503 ENVIRONMENT_ELSEWHERE naming the certificate error when it cannot check the owner (no --internal-ca)', async () => {
    const owner = await replica(cert);
    const blind = await replica(undefined);
    await own(owner);
    const answer = await post(blind.url, `${paths.process(ENV, 'p1')}/terminate`, cert);
    expect({ status: answer.status, code: answer.body.code, retryAfter: answer.headers['retry-after'] }).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE', retryAfter: '1' });
    expect(answer.body.detail).toMatch(/cannot be reached: https:\/\/127\.0\.0\.1:\d+: (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/);
  });

  it('is 503 ENVIRONMENT_ELSEWHERE with Retry-After when the owner url refuses the connection: the owner did nothing', async () => {
    const owner = await replica(cert);
    const other = await replica(cert);
    const ownerId = await own(owner);
    await store.replicas.advertise(ownerId, `https://127.0.0.1:${await closedPort()}`, 60_000);
    const answer = await post(other.url, `${paths.process(ENV, 'p1')}/terminate`, cert);
    expect({ status: answer.status, code: answer.body.code, retryAfter: answer.headers['retry-after'] }).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE', retryAfter: '1' });
    expect(answer.body.detail).toContain('ECONNREFUSED');
  });

  it('is 503 ENVIRONMENT_ELSEWHERE when the owner advertises no url (it stopped, or takes no forwarded calls)', async () => {
    const owner = await replica(cert);
    const other = await replica(cert);
    const ownerId = await own(owner);
    await connection.del(`${PREFIX}:{global}:replica:${ownerId}`);
    const answer = await post(other.url, `${paths.process(ENV, 'p1')}/terminate`, cert);
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 503, code: 'ENVIRONMENT_ELSEWHERE' });
    expect(answer.body.detail).toContain('advertises no internal url');
  });

  it('is 502 FORWARD_FAILED when the owner took the call and the connection was lost before it answered', async () => {
    const owner = await replica(cert);
    const other = await replica(cert);
    const ownerId = await own(owner);
    const dropping = await droppingServer();
    try {
      await store.replicas.advertise(ownerId, dropping.url, 60_000);
      const answer = await post(other.url, `${paths.process(ENV, 'p1')}/terminate`, cert);
      await dropping.took;
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 502, code: 'FORWARD_FAILED' });
      expect(answer.body.detail).toContain('it may have acted');
    } finally {
      await dropping.close();
    }
  });
});
