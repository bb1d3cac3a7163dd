/**
 * Issue 41, files through replicas: two `exec-rx host` replicas on one real redis-server behind a real
 * HAProxy running the README's configuration (docs/haproxy.cfg), with a replica key, and one executor
 * dialling the balancer. Every file call (upload, download, HEAD, metadata, listing, mkdir, copy, move,
 * remove) sent with plain `fetch`, to the balancer's url and straight to the replica that is not the
 * owner, is forwarded to the owner with both bodies streamed: none is answered 503, and the bytes come
 * back sha256-exact.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { FORWARDED_BY_HEADER } from '../../src/host/api/forwarding';
import { startDirectExecutor } from '../support/executor';
import type { SpecHaproxy } from '../support/haproxy';
import { startHaproxy } from '../support/haproxy';
import type { Replica, ReplicaCredentials } from './replicas';
import { replicaCluster, whichSays } from './replicas';

jest.setTimeout(240_000);

const CREDENTIALS: ReplicaCredentials = { keyId: 'AKIDREPLICAFILES', secret: 'replica-files-secret-do-not-print', token: 'replica-files-token-do-not-print' };
const ENV = 'files-1';
/** The upload's size: several MiB, so that both bodies cross the forward in many chunks. */
const BYTES = 24 * 1024 * 1024;

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const files = (route: string, path: string, extra = ''): string => `/api/v1/environments/${ENV}/files${route}?path=${encodeURIComponent(path)}${extra}`;
const auth = { authorization: `Bearer ${CREDENTIALS.token}` };

/** One answer as a plain `fetch` saw it. */
interface Answer {
  readonly status: number;
  readonly body: Buffer;
  readonly forwardedBy: string | null;
}

async function call(base: string, method: string, target: string, init: { readonly body?: unknown; readonly raw?: Readable; readonly headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...auth, ...init.headers };
  let body: RequestInit['body'];
  if (init.raw !== undefined) {
    headers['content-type'] = 'application/octet-stream';
    body = Readable.toWeb(init.raw) as ReadableStream<Uint8Array>;
  } else if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const response = await fetch(`${base}${target}`, { method, headers, ...(body === undefined ? {} : { body, duplex: 'half' }) } as RequestInit);
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()), forwardedBy: response.headers.get(FORWARDED_BY_HEADER) };
}

/** Every file call, once, through `base`, in a directory of its own; resolves with every answer. */
async function fileCalls(base: string, dir: string, data: Buffer): Promise<{ answers: Answer[]; downloaded: Buffer }> {
  const answers: Answer[] = [];
  const take = (answer: Answer): Answer => (answers.push(answer), answer);
  take(await call(base, 'POST', `/api/v1/environments/${ENV}/files/directories`, { body: { path: dir, parents: true } }));
  // The upload streamed in 64 KiB pieces, without a Content-Length: forwarded as it arrives.
  const pieces = Array.from({ length: data.byteLength / 65536 }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536));
  take(await call(base, 'PUT', files('/content', join(dir, 'one.bin')), { raw: Readable.from(pieces) }));
  take(await call(base, 'HEAD', files('/content', join(dir, 'one.bin'))));
  const download = take(await call(base, 'GET', files('/content', join(dir, 'one.bin'))));
  take(await call(base, 'GET', files('/metadata', join(dir, 'one.bin'))));
  take(await call(base, 'POST', `/api/v1/environments/${ENV}/files/copy`, { body: { source: join(dir, 'one.bin'), destination: join(dir, 'two.bin') } }));
  take(await call(base, 'POST', `/api/v1/environments/${ENV}/files/move`, { body: { source: join(dir, 'two.bin'), destination: join(dir, 'three.bin') } }));
  take(await call(base, 'GET', files('/entries', dir)));
  take(await call(base, 'DELETE', files('', join(dir, 'three.bin'))));
  return { answers, downloaded: download.body };
}

/** The statuses of {@link fileCalls}: mkdir, upload, HEAD, GET, metadata, copy, move, listing, remove. */
const EXPECTED = [201, 201, 200, 200, 200, 201, 201, 200, 204];

describe('two replicas behind HAProxy, forwarding file calls to the owner', () => {
  const cluster = replicaCluster('replica-files', CREDENTIALS);
  let work: string;
  let balancer: SpecHaproxy | undefined;
  let executor: SpawnedExecutor | undefined;
  let owner: Replica | undefined;
  let other: Replica | undefined;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-files-forward-'));
    const keyFile = join(work, 'replica-key');
    writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const args = ['--replica-key-file', keyFile];
    const a = await cluster.start('a', args);
    const b = await cluster.start('b', args);
    balancer = await startHaproxy({ backends: [{ name: 'a', port: a.port }, { name: 'b', port: b.port }], healthPath: '/readyz' });
    executor = await startDirectExecutor({ remoteUrl: balancer.url, environmentId: ENV, credentials: { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret } });
    owner = await whichSays([a, b], `environment ${ENV} generation 1: connected`, 30_000);
    other = owner === a ? b : a;
  });
  afterAll(async () => {
    await executor?.stop();
    await balancer?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('answers every file call through the balancer and straight to the non-owner, none 503, the bytes sha256-exact', async () => {
    if (balancer === undefined || other === undefined || owner === undefined) throw new Error('not started');
    const data = randomBytes(BYTES);
    for (const [name, base] of [
      ['balancer', balancer.url],
      ['non-owner', other.base],
    ] as const) {
      for (let round = 0; round < 3; round++) {
        const dir = join(work, `${name}-${round}`);
        const { answers, downloaded } = await fileCalls(base, dir, data);
        expect({ name, round, statuses: answers.map((a) => a.status) }).toEqual({ name, round, statuses: EXPECTED });
        expect(sha256(downloaded)).toBe(sha256(data));
        // What the executor wrote: the upload's bytes, under the first name only.
        expect(sha256(readFileSync(join(dir, 'one.bin')))).toBe(sha256(data));
        if (name === 'non-owner') expect(answers.every((a) => a.forwardedBy !== null)).toBe(true);
      }
    }
    expect(await cluster.metric(other, 'exec_rx_host_forwarded_calls_total', { outcome: 'answered' })).toBeGreaterThanOrEqual(27);
  });
});
