import { PassThrough } from 'node:stream';
import { EnvironmentManager } from '../../src/environment/environment-manager';
import { ConfigError, HttpBodyOverflowError, HttpRequestTooLargeError, HttpTargetRefusedError, RpcError, TransportClosedError } from '../../src/errors';
import type { ExecFetchInit, ExecFetchOptions } from '../../src/http/exec-fetch';
import { execFetch } from '../../src/http/exec-fetch';
import { ExecHttpClient } from '../../src/http/http-client';
import { HttpBodyError } from '../../src/http/http-types';
import { HttpTargetPolicy, LOOPBACK_TARGETS } from '../../src/http/target-policy';
import type { ExecClient } from '../../src/session/exec-client';
import type { FakeSocketPort } from '../support/fake-socket-port';
import type { Handler } from '../fs/client-harness';
import { closeIdle, connectedTo, executorPort, requestsOn } from '../fs/client-harness';

const BASE = 'http://127.0.0.1:8080';
const b64 = (text: string): string => Buffer.from(text).toString('base64');
const delta = (requestId: string, seq: number, text: string, done = false, error: string | null = null) => ({
  method: 'http/request/bodyDelta',
  params: { requestId, seq, deltaBase64: b64(text), done, error },
});

/** A scripted answer: the head, and the body's pieces delivered before the reply (held until the head), `done` after the last. */
interface Answer {
  readonly status: number;
  readonly headers?: readonly { name: string; value: string }[];
  readonly body?: readonly string[];
}

/** Answers each `http/request` by its path; a path the routes do not name gets no reply. */
const routes =
  (table: Readonly<Record<string, Answer | ((params: Record<string, unknown>) => Answer)>>): Handler =>
  (params, peer) => {
    const route = table[new URL(String(params.url)).pathname];
    if (route === undefined) return undefined;
    const answer = typeof route === 'function' ? route(params) : route;
    const requestId = String(params.requestId);
    if (answer.body !== undefined) {
      answer.body.forEach((text, i) => peer.deliver(delta(requestId, i + 1, text)));
      peer.deliver(delta(requestId, answer.body.length + 1, '', true));
    }
    return { result: { status: answer.status, headers: answer.headers ?? [], bodyBase64: '' } };
  };

/** The body read to its end, as text (rejects with the stream's error). */
async function text(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  let all = '';
  for (let read = await reader.read(); !read.done; read = await reader.read()) all += Buffer.from(read.value).toString();
  return all;
}

/** The http/request params sent, in order. */
const sentParams = (port: FakeSocketPort): unknown[] => requestsOn(port).map((m) => m.params);

describe('execFetch (scripted executor)', () => {
  let client: ExecClient | undefined;
  afterEach(() => {
    if (client !== undefined) closeIdle(client);
    client = undefined;
  });

  const connect = async (handler: Handler, options: Partial<ExecFetchOptions> = {}) => {
    const port = executorPort({ 'http/request': handler });
    const connected = await connectedTo(port);
    client = connected;
    let n = 0;
    const http = new ExecHttpClient(connected, { newRequestId: () => `r${(n += 1)}` });
    const fetch = (input: string | URL | Request, init: ExecFetchInit = {}) => execFetch(http, input, init, { policy: HttpTargetPolicy.of(LOOPBACK_TARGETS), ...options });
    return { port, fetch };
  };

  it('sends one streamed http/request with redirectPolicy stop, and drops hop-by-hop headers both ways', async () => {
    const { port, fetch } = await connect(
      routes({
        '/x': {
          status: 200,
          headers: [
            { name: 'content-type', value: 'text/plain' },
            { name: 'connection', value: 'keep-alive, x-hop' },
            { name: 'keep-alive', value: 'timeout=5' },
            { name: 'transfer-encoding', value: 'chunked' },
            { name: 'x-hop', value: 'gone' },
            { name: 'set-cookie', value: 'a=1' },
            { name: 'set-cookie', value: 'b=2' },
          ],
          body: ['hello ', 'world'],
        },
      }),
    );
    const headers = { accept: 'text/plain', connection: 'x-mine', 'x-mine': '1', 'keep-alive': '5', upgrade: 'h2c', te: 'trailers', host: 'evil.example', 'content-length': '3' };
    const response = await fetch(`${BASE}/x`, { headers, timeoutMs: 1000 });
    expect(sentParams(port)).toEqual([
      {
        method: 'GET',
        url: `${BASE}/x`,
        requestId: 'r1',
        headers: [
          { name: 'accept', value: 'text/plain' },
          { name: 'host', value: 'evil.example' },
        ],
        timeoutMs: 1000,
        redirectPolicy: 'stop',
        streamResponse: true,
      },
    ]);
    expect([...response.headers]).toEqual([
      ['content-type', 'text/plain'],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
    ]);
    expect({ status: response.status, statusText: response.statusText, url: response.url, redirected: response.redirected }).toEqual({
      status: 200,
      statusText: 'OK',
      url: `${BASE}/x`,
      redirected: false,
    });
    expect(await text(response)).toBe('hello world');
  });

  it('sends a POST body with fetch\'s content type, from init or from a Request', async () => {
    const { port, fetch } = await connect(routes({ '/p': { status: 201, body: [] } }));
    await fetch(`${BASE}/p`, { method: 'post', body: 'ping' });
    await fetch(new Request(`${BASE}/p`, { method: 'PUT', body: new Uint8Array([1, 2]), headers: { 'content-type': 'application/octet-stream' } }));
    await fetch(`${BASE}/p`, { method: 'POST', body: new URLSearchParams({ a: '1' }) });
    expect(sentParams(port)).toMatchObject([
      { method: 'POST', bodyBase64: b64('ping'), headers: [{ name: 'content-type', value: 'text/plain;charset=UTF-8' }] },
      { method: 'PUT', bodyBase64: 'AQI=', headers: [{ name: 'content-type', value: 'application/octet-stream' }] },
      { method: 'POST', bodyBase64: b64('a=1'), headers: [{ name: 'content-type', value: 'application/x-www-form-urlencoded;charset=UTF-8' }] },
    ]);
  });

  it('follows a redirect hop by hop, each hop its own http/request with redirectPolicy stop', async () => {
    const { port, fetch } = await connect(
      routes({
        '/a': { status: 302, headers: [{ name: 'location', value: '/b?q=1' }], body: ['moved'] },
        '/b': { status: 200, body: ['there'] },
      }),
    );
    const response = await fetch(`${BASE}/a`);
    expect(sentParams(port)).toEqual([
      { method: 'GET', url: `${BASE}/a`, requestId: 'r1', redirectPolicy: 'stop', streamResponse: true },
      { method: 'GET', url: `${BASE}/b?q=1`, requestId: 'r2', redirectPolicy: 'stop', streamResponse: true },
    ]);
    expect({ status: response.status, url: response.url, redirected: response.redirected }).toEqual({ status: 200, url: `${BASE}/b?q=1`, redirected: true });
    expect(await text(response)).toBe('there');
  });

  it('turns a POST into a GET without body on 302 and 303, and keeps method and body on 307; another origin loses credentials and Host', async () => {
    const { port, fetch } = await connect(
      routes({
        '/post': { status: 303, headers: [{ name: 'location', value: 'http://[::1]:9/get' }] },
        '/get': { status: 307, headers: [{ name: 'location', value: 'http://[::1]:9/again' }] },
        '/keep': { status: 307, headers: [{ name: 'location', value: '/done' }] },
        '/again': { status: 200, body: [] },
        '/done': { status: 200, body: [] },
      }),
    );
    await fetch(`${BASE}/post`, { method: 'POST', body: 'x', headers: { authorization: 'Bearer t', host: 'a.example', 'x-keep': '1' } });
    await fetch(`${BASE}/keep`, { method: 'POST', body: 'y' });
    const sent = sentParams(port);
    expect(sent[1]).toEqual({ method: 'GET', url: 'http://[::1]:9/get', requestId: 'r2', headers: [{ name: 'x-keep', value: '1' }], redirectPolicy: 'stop', streamResponse: true });
    expect(sent[2]).toMatchObject({ method: 'GET', url: 'http://[::1]:9/again' });
    expect(sent[4]).toMatchObject({ method: 'POST', url: `${BASE}/done`, bodyBase64: b64('y'), headers: [{ name: 'content-type', value: 'text/plain;charset=UTF-8' }] });
  });

  it.each([
    ['http://10.0.0.1/', 'not-allowed'],
    ['http://169.254.169.254/latest/meta-data/', 'metadata'],
    ['ftp://127.0.0.1/', 'scheme'],
  ] as const)('refuses a redirect to %s with HttpTargetRefusedError and sends nothing to it', async (location, reason) => {
    const { port, fetch } = await connect(routes({ '/a': { status: 301, headers: [{ name: 'location', value: location }] } }));
    const failed = fetch(`${BASE}/a`);
    await expect(failed).rejects.toBeInstanceOf(HttpTargetRefusedError);
    await expect(failed).rejects.toMatchObject({ reason });
    expect(sentParams(port)).toHaveLength(1);
  });

  it('refuses a first target the policy refuses without sending anything', async () => {
    const { port, fetch } = await connect(routes({}));
    await expect(fetch('http://example.com/')).rejects.toMatchObject({ code: 'HTTP_TARGET_REFUSED', reason: 'not-allowed' });
    expect(sentParams(port)).toEqual([]);
  });

  it("returns the 3xx itself with redirect: 'manual', and rejects with a TypeError with redirect: 'error'", async () => {
    const { port, fetch } = await connect(routes({ '/a': { status: 302, headers: [{ name: 'location', value: '/b' }], body: ['see /b'] } }));
    const manual = await fetch(`${BASE}/a`, { redirect: 'manual' });
    expect({ status: manual.status, location: manual.headers.get('location'), redirected: manual.redirected }).toEqual({ status: 302, location: '/b', redirected: false });
    expect(await text(manual)).toBe('see /b');
    await expect(fetch(`${BASE}/a`, { redirect: 'error' })).rejects.toThrow(TypeError);
    expect(sentParams(port)).toHaveLength(2);
  });

  it('follows at most 20 redirects: the 21st rejects with a TypeError', async () => {
    let hops = 0;
    const { port, fetch } = await connect(routes({ '/loop': () => ({ status: 307, headers: [{ name: 'location', value: `/loop?n=${(hops += 1)}` }] }) }));
    await expect(fetch(`${BASE}/loop`)).rejects.toThrow(/more than 20 redirects/);
    expect(sentParams(port)).toHaveLength(21);
  });

  it('rejects a request body over the bound with HttpRequestTooLargeError and sends nothing', async () => {
    const { port, fetch } = await connect(routes({ '/p': { status: 200, body: [] } }), { maxRequestBodyBytes: 10 });
    await expect(fetch(`${BASE}/p`, { method: 'POST', body: 'x'.repeat(11) })).rejects.toEqual(new HttpRequestTooLargeError(11, 10));
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(new Uint8Array(4)),
      cancel: () => {
        cancelled = true;
      },
    });
    await expect(fetch(`${BASE}/p`, { method: 'POST', body: stream })).rejects.toEqual(new HttpRequestTooLargeError(12, 10));
    expect(cancelled).toBe(true);
    await expect(fetch(`${BASE}/p`, { method: 'GET', body: 'x' })).rejects.toThrow(TypeError);
    expect(sentParams(port)).toEqual([]);
  });

  it('holds a request body to 11 MiB whatever maxRequestBodyBytes says', async () => {
    const { port, fetch } = await connect(routes({}), { maxRequestBodyBytes: 64 * 1024 * 1024 });
    const blob = new Blob([new Uint8Array(11 * 1024 * 1024 + 1)]);
    await expect(fetch(`${BASE}/p`, { method: 'POST', body: blob })).rejects.toEqual(new HttpRequestTooLargeError(11 * 1024 * 1024 + 1, 11 * 1024 * 1024));
    expect(sentParams(port)).toEqual([]);
  });

  it('errors the body with HttpBodyOverflowError once more than bufferBytes wait unread, and stops listening', async () => {
    const { port, fetch } = await connect(routes({ '/big': { status: 200 } }), { bufferBytes: 8 });
    const response = await fetch(`${BASE}/big`);
    const reader = response.body?.getReader();
    port.deliver(delta('r1', 1, 'abcde'));
    await expect(reader?.read()).resolves.toEqual({ done: false, value: new Uint8Array(Buffer.from('abcde')) });
    port.deliver(delta('r1', 2, 'fghij'));
    port.deliver(delta('r1', 3, 'klmno'));
    await expect(reader?.read()).rejects.toEqual(new HttpBodyOverflowError('r1', 8));
    port.deliver(delta('r1', 4, '', true));
  });

  it('errors the body after the bytes before it when the executor reports a body failure', async () => {
    const { port, fetch } = await connect(routes({ '/f': { status: 200 } }));
    const response = await fetch(`${BASE}/f`);
    port.deliver(delta('r1', 1, 'part1-'));
    port.deliver(delta('r1', 2, 'part2', false, 'error decoding response body'));
    const reader = response.body?.getReader();
    await expect(reader?.read()).resolves.toMatchObject({ done: false });
    await expect(reader?.read()).resolves.toMatchObject({ done: false });
    await expect(reader?.read()).rejects.toEqual(new HttpBodyError('r1', 2, 'error decoding response body'));
  });

  it('errors the body with TransportClosedError after the bytes before it when the connection drops', async () => {
    const { port, fetch } = await connect(routes({ '/f': { status: 200 } }));
    const response = await fetch(`${BASE}/f`);
    port.deliver(delta('r1', 1, 'before'));
    port.drop('peer vanished');
    const reader = response.body?.getReader();
    await expect(reader?.read()).resolves.toEqual({ done: false, value: new Uint8Array(Buffer.from('before')) });
    await expect(reader?.read()).rejects.toEqual(new TransportClosedError('remote', 1006, 'peer vanished'));
  });

  it('rejects with the RpcError of a request that failed before its head', async () => {
    const message = 'http/request failed: error sending request for url (http://127.0.0.1:1/)';
    const { fetch } = await connect(() => ({ error: { code: -32603, message } }));
    const failed = fetch('http://127.0.0.1:1/');
    await expect(failed).rejects.toBeInstanceOf(RpcError);
    await expect(failed).rejects.toMatchObject({ method: 'http/request', rpcCode: -32603 });
  });

  it('rejects with the signal reason on an abort before the head, and sends nothing when already aborted', async () => {
    const { port, fetch } = await connect(routes({}));
    const controller = new AbortController();
    const pending = fetch(`${BASE}/never`, { signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    expect(sentParams(port)).toHaveLength(1);
    const reason = new Error('enough');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(fetch(`${BASE}/never`, { signal: controller.signal })).rejects.toBe(reason);
    expect(sentParams(port)).toHaveLength(1);
  });

  it('errors the body with the signal reason on an abort during the body, and ignores later deltas', async () => {
    const { port, fetch } = await connect(routes({ '/slow': { status: 200 } }));
    const controller = new AbortController();
    const response = await fetch(`${BASE}/slow`, { signal: controller.signal });
    const reader = response.body?.getReader();
    port.deliver(delta('r1', 1, 'first'));
    await expect(reader?.read()).resolves.toMatchObject({ done: false });
    controller.abort();
    await expect(reader?.read()).rejects.toMatchObject({ name: 'AbortError' });
    port.deliver(delta('r1', 2, 'late', true));
  });

  it('gives a null body for 204 and for HEAD, and stops listening', async () => {
    const { port, fetch } = await connect(routes({ '/none': { status: 204 }, '/head': { status: 200, headers: [{ name: 'x-len', value: '5' }] } }));
    const empty = await fetch(`${BASE}/none`, { method: 'DELETE' });
    expect({ status: empty.status, body: empty.body }).toEqual({ status: 204, body: null });
    const head = await fetch(`${BASE}/head`, { method: 'HEAD' });
    expect({ status: head.status, body: head.body, len: head.headers.get('x-len') }).toEqual({ status: 200, body: null, len: '5' });
    port.deliver(delta('r1', 1, 'ignored', true));
  });

  it('acquires before each hop is sent and releases at its head', async () => {
    const log: string[] = [];
    const acquire = (): Promise<() => void> => {
      log.push(`acquire ${log.length}`);
      return Promise.resolve(() => log.push('release'));
    };
    const handler = routes({ '/a': { status: 308, headers: [{ name: 'location', value: '/b' }] }, '/b': { status: 200, body: [] } });
    const { fetch } = await connect((params, peer) => (log.push(`send ${new URL(String(params.url)).pathname}`), handler(params, peer)), { acquire });
    await fetch(`${BASE}/a`);
    expect(log).toEqual(['acquire 0', 'send /a', 'release', 'acquire 3', 'send /b', 'release']);
  });
});

describe('EnvironmentManagerOptions.http', () => {
  it('rejects the building of a manager with ConfigError for a bad allow entry, closing what it opened', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const building = EnvironmentManager.fromStdio('env-1', { stdin, stdout }, { clientName: 'spec', http: { allow: ['127.0.0.1', '10.0.0.0/40'] } });
    await expect(building).rejects.toBeInstanceOf(ConfigError);
    await expect(building).rejects.toThrow('"10.0.0.0/40"');
    stdin.destroy();
    stdout.destroy();
  });
});
