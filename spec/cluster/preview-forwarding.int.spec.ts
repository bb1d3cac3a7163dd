/**
 * Issue 42, previews through replicas: two `exec-rx host` replicas (`--allow-http --preview-port 0`) on
 * one real redis-server with a replica key, and one executor on one of them. A preview opened on the other
 * replica's preview listener, with a token, with a link that replica signed and the cookie it set, and on a
 * port made public there, is forwarded to the owner, its answer streamed back (an event stream live).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { FORWARDED_BY_HEADER } from '../../src/host/api/forwarding';
import type { PreviewLink } from '../../src/wire/http-api';
import { startDirectExecutor } from '../support/executor';
import { closedPort, HTTP_TARGET_SCRIPT } from '../support/http-target';
import { openRequest, raw } from '../host/api/files-support';
import type { Replica, ReplicaCredentials } from './replicas';
import { replicaCluster, whichSays } from './replicas';

jest.setTimeout(120_000);

const CREDENTIALS: ReplicaCredentials = { keyId: 'AKIDREPLICAPREVIEW', secret: 'replica-preview-secret-do-not-print', token: 'replica-preview-token-do-not-print' };
const ENV = 'preview-r1';
const auth = { authorization: `Bearer ${CREDENTIALS.token}` };

async function api(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${base}${path}`, { method, headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

describe('two replicas, a preview opened on the one without the executor', () => {
  const cluster = replicaCluster('replica-preview', CREDENTIALS);
  let work: string;
  let executor: SpawnedExecutor | undefined;
  let owner: Replica | undefined;
  let other: Replica | undefined;
  let port = 0;
  let processId = '';
  const previewOf = (replica: Replica | undefined): string => replica?.previewUrl ?? '';

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-preview-forward-'));
    const keyFile = join(work, 'replica-key');
    writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const args = ['--replica-key-file', keyFile, '--allow-http', '--preview-port', '0'];
    const a = await cluster.start('a', args);
    const b = await cluster.start('b', args);
    executor = await startDirectExecutor({ remoteUrl: a.base, environmentId: ENV, credentials: { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret } });
    owner = await whichSays([a, b], `environment ${ENV} generation 1: connected`, 30_000);
    other = owner === a ? b : a;
    port = await closedPort();
    const started = await api(owner.base, 'POST', `/api/v1/environments/${ENV}/processes`, { argv: ['python3', '-u', '-c', HTTP_TARGET_SCRIPT, String(port)], cwd: tmpdir() });
    expect(started.status).toBe(201);
    processId = (started.json as { processId: string }).processId;
  });
  afterAll(async () => {
    // The replicas may be stopped already (their tracker's afterAll): stopping the executor ends its process tree, the target with it.
    if (owner !== undefined && processId !== '') await api(owner.base, 'POST', `/api/v1/environments/${ENV}/processes/${processId}/terminate`).catch(() => undefined);
    await executor?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('forwards a preview with a token to the owner (waiting for the port first) and streams a 20 MB body back', async () => {
    const hello = await raw(previewOf(other), 'GET', `/${ENV}/${port}/hello?exec-rx-wait-for-port=20`, { headers: auth });
    expect({ status: hello.status, body: hello.body.toString(), by: hello.headers[FORWARDED_BY_HEADER] !== undefined }).toEqual({ status: 200, body: 'hello', by: true });
    const big = await raw(previewOf(other), 'GET', `/${ENV}/${port}/big?n=20000000`, { headers: auth });
    expect({ status: big.status, length: big.body.length, complete: big.complete }).toEqual({ status: 200, length: 20_000_000, complete: true });
    const go = await raw(previewOf(other), 'GET', `/${ENV}/${port}/go`, { headers: auth });
    expect({ status: go.status, location: go.headers.location }).toEqual({ status: 302, location: `/${ENV}/${port}/hello` });
  });

  it('takes a link and its cookie on the replica that signed it, and forwards the preview; an event stream arrives live', async () => {
    const made = await api(other?.base ?? '', 'POST', `/api/v1/environments/${ENV}/previews/${port}/links`);
    expect(made.status).toBe(201);
    const link = made.json as PreviewLink;
    const url = new URL(link.pathUrl);
    expect(url.origin).toBe(previewOf(other));
    const exchanged = await raw(previewOf(other), 'GET', `${url.pathname}${url.search}`);
    expect(exchanged.status).toBe(303);
    const cookie = (exchanged.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
    const { req, answer } = openRequest(previewOf(other), 'GET', `/${ENV}/${port}/sse`, { headers: { cookie, accept: 'text/event-stream' } });
    const seen: number[] = [];
    req.once('response', (res) => res.on('data', (chunk: Buffer) => chunk.toString().split('\n\n').filter((event) => event.startsWith('data: tick')).forEach(() => seen.push(Date.now()))));
    req.end();
    const whole = await answer;
    expect(whole.status).toBe(200);
    expect(seen.length).toBe(5);
    expect((seen[4] ?? 0) - (seen[0] ?? 0)).toBeGreaterThan(900);
  });

  it("lets the owner decide a request without credentials: 401 for a private port, 200 once it is public (set through the other replica)", async () => {
    expect((await raw(previewOf(other), 'GET', `/${ENV}/${port}/hello`)).status).toBe(401);
    expect((await api(other?.base ?? '', 'PUT', `/api/v1/environments/${ENV}/previews/${port}`, { sharing: 'public' })).status).toBe(200);
    const open = await raw(previewOf(other), 'GET', `/${ENV}/${port}/hello`);
    expect({ status: open.status, body: open.body.toString() }).toEqual({ status: 200, body: 'hello' });
    expect((await api(other?.base ?? '', 'PUT', `/api/v1/environments/${ENV}/previews/${port}`, { sharing: 'private' })).status).toBe(200);
    expect((await raw(previewOf(other), 'GET', `/${ENV}/${port}/hello`)).status).toBe(401);
  });

  it('refuses the forwarded route to a client that is not a replica: 404', async () => {
    const direct = await raw(owner?.base ?? '', 'GET', `/api/v1/environments/${ENV}/previews/${port}/request?rest=%2Fhello&form=path`, { headers: auth });
    expect(direct.status).toBe(404);
  });
});
