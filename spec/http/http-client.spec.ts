import type { Subscription } from 'rxjs';
import { Subject } from 'rxjs';
import { ProtocolError, RpcError, TransportClosedError } from '../../src/errors';
import { ExecHttpClient } from '../../src/http/http-client';
import type { ExecHttpClientOptions } from '../../src/http/http-client';
import type { HttpEvent } from '../../src/http/http-types';
import { HttpBodyError } from '../../src/http/http-types';
import type { ExecClient } from '../../src/session/exec-client';
import type { SocketPort } from '../../src/transport/socket-port';
import type { Handler } from '../fs/client-harness';
import { closeIdle, connectedTo, executorPort, requestsOn, startClient } from '../fs/client-harness';

const URL = 'http://127.0.0.1:8080/x';
const HEADERS = [{ name: 'content-type', value: 'text/plain' }];
const HEAD = { status: 200, headers: HEADERS, bodyBase64: '' };
// The three recorded deltas of docs/protocol.md#http-requests: "part1-", "part2", done.
const delta = (seq: number, deltaBase64: string, done = false, error: string | null = null, requestId = 'r1') => ({
  method: 'http/request/bodyDelta',
  params: { requestId, seq, deltaBase64, done, error },
});
const D1 = delta(1, 'cGFydDEt');
const D2 = delta(2, 'cGFydDI=');
const D3 = delta(3, '', true);

/** Records what a stream emits, and how it ends. */
const record = (events$: ReturnType<ExecHttpClient['stream']>) => {
  const seen: { events: HttpEvent[]; completed: boolean; error: unknown; subscription: Subscription | undefined } = { events: [], completed: false, error: undefined, subscription: undefined };
  seen.subscription = events$.subscribe({ next: (e) => seen.events.push(e), complete: () => (seen.completed = true), error: (e: unknown) => (seen.error = e) });
  return seen;
};
const head = { type: 'head', status: 200, headers: HEADERS };
const body = (text: string) => ({ type: 'body', chunk: Buffer.from(text) });

describe('ExecHttpClient', () => {
  let client: ExecClient | undefined;
  afterEach(() => {
    if (client !== undefined) closeIdle(client);
    client = undefined;
  });

  const connect = async (handler: Handler, options: ExecHttpClientOptions = {}) => {
    const port = executorPort({ 'http/request': handler });
    const connected = await connectedTo(port);
    client = connected;
    let n = 0;
    return { port, http: new ExecHttpClient(connected, { newRequestId: () => `r${(n += 1)}`, ...options }) };
  };

  it('sends a buffered request with exactly the given fields and resolves with status, headers and body', async () => {
    const { port, http } = await connect(() => ({ result: { status: 200, headers: HEADERS, bodyBase64: 'cGFydDEtcGFydDI=' } }));
    const response = await http.request({ method: 'POST', url: URL, headers: [{ name: 'accept', value: 'text/plain' }], body: 'ping', timeoutMs: 5000, redirectPolicy: 'stop' });
    expect(response).toEqual({ status: 200, headers: HEADERS, body: Buffer.from('part1-part2') });
    expect(requestsOn(port)).toEqual([
      { id: 2, method: 'http/request', params: { method: 'POST', url: URL, requestId: 'r1', headers: [{ name: 'accept', value: 'text/plain' }], bodyBase64: 'cGluZw==', timeoutMs: 5000, redirectPolicy: 'stop' } },
    ]);
  });

  it('sends only what was given, and a caller-chosen requestId as is', async () => {
    const { port, http } = await connect(() => ({ result: HEAD }));
    await http.request({ method: 'GET', url: URL });
    await http.request({ method: 'GET', url: URL, requestId: 'mine', body: null, timeoutMs: null });
    expect(requestsOn(port)).toEqual([
      { id: 2, method: 'http/request', params: { method: 'GET', url: URL, requestId: 'r1' } },
      { id: 3, method: 'http/request', params: { method: 'GET', url: URL, requestId: 'mine', bodyBase64: null, timeoutMs: null } },
    ]);
  });

  it('rejects a buffered request with the RpcError the executor answers', async () => {
    const { http } = await connect(() => ({ error: { code: -32603, message: 'http/request failed: error sending request for url (http://127.0.0.1:1/)' } }));
    const failed = http.request({ method: 'GET', url: 'http://127.0.0.1:1/' });
    await expect(failed).rejects.toBeInstanceOf(RpcError);
    await expect(failed).rejects.toMatchObject({ method: 'http/request', rpcCode: -32603 });
  });

  it('streams the head, then the body deltas in order, and completes at done', async () => {
    const { port, http } = await connect(() => ({ result: HEAD }));
    const seen = record(http.stream({ method: 'GET', url: URL }));
    expect(seen.events).toEqual([head]);
    port.deliver(D1);
    port.deliver(D2);
    expect(seen.completed).toBe(false);
    port.deliver(D3);
    expect(seen).toMatchObject({ events: [head, body('part1-'), body('part2')], completed: true, error: undefined });
    expect(requestsOn(port)).toEqual([{ id: 2, method: 'http/request', params: { method: 'GET', url: URL, requestId: 'r1', streamResponse: true } }]);
  });

  it('reorders out-of-order deltas by seq and drops duplicates and other requests', async () => {
    const { port, http } = await connect(() => ({ result: HEAD }));
    const seen = record(http.stream({ method: 'GET', url: URL }));
    port.deliver(D3);
    port.deliver(delta(1, 'b3RoZXI=', false, null, 'r9'));
    port.deliver(D2);
    expect(seen.events).toEqual([head]);
    port.deliver(D1);
    port.deliver(D1);
    expect(seen).toMatchObject({ events: [head, body('part1-'), body('part2')], completed: true, error: undefined });
  });

  it('keeps deltas that arrive before the head and emits them after it', async () => {
    const { http } = await connect((_params, peer) => {
      peer.deliver(D2);
      peer.deliver(D1);
      peer.deliver(D3);
      return { result: HEAD };
    });
    const seen = record(http.stream({ method: 'GET', url: URL }));
    expect(seen).toMatchObject({ events: [head, body('part1-'), body('part2')], completed: true, error: undefined });
  });

  it('errors with HttpBodyError at a delta carrying an error', async () => {
    const { port, http } = await connect(() => ({ result: HEAD }));
    const seen = record(http.stream({ method: 'GET', url: URL }));
    port.deliver(delta(2, '', false, 'connection reset'));
    port.deliver(D1);
    expect(seen.events).toEqual([head, body('part1-')]);
    expect(seen.error).toEqual(new HttpBodyError('r1', 2, 'connection reset'));
    expect(seen.error).toMatchObject({ code: 'RPC_ERROR', method: 'http/request', rpcCode: -32603, requestId: 'r1', seq: 2 });
  });

  it('errors with the request error when the executor rejects it', async () => {
    const { http } = await connect(() => ({ error: { code: -32602, message: 'unsupported scheme' } }));
    const seen = record(http.stream({ method: 'GET', url: 'ftp://x' }));
    expect(seen.events).toEqual([]);
    expect(seen.error).toMatchObject({ method: 'http/request', rpcCode: -32602 });
  });

  it('errors with ProtocolError when too many deltas wait for a missing seq', async () => {
    const { port, http } = await connect(() => ({ result: HEAD }), { bodyOrderLimits: { maxPendingDeltas: 2, maxPendingBytes: 1024 } });
    const seen = record(http.stream({ method: 'GET', url: URL }));
    port.deliver(delta(2, 'YQ=='));
    port.deliver(delta(3, 'Yg=='));
    expect(seen.error).toBeUndefined();
    port.deliver(delta(4, 'Yw=='));
    expect(seen.error).toEqual(new ProtocolError('http/request r1 body reorder buffer exceeds 2 entries'));
  });

  it('stops listening on unsubscribe: later deltas are ignored', async () => {
    const { port, http } = await connect(() => ({ result: HEAD }));
    const seen = record(http.stream({ method: 'GET', url: URL }));
    port.deliver(D1);
    seen.subscription?.unsubscribe();
    port.deliver(D2);
    port.deliver(D3);
    expect(seen).toMatchObject({ events: [head, body('part1-')], completed: false, error: undefined });
  });

  it('errors with TransportClosedError when the connection drops in the middle of the body, and is not resent', async () => {
    const first = executorPort({ 'http/request': () => ({ result: HEAD }) });
    const second = executorPort({ 'http/request': () => ({ result: HEAD }) });
    const sockets = new Subject<SocketPort>();
    const started = startClient(sockets, true);
    sockets.next(first);
    client = await started;
    const seen = record(new ExecHttpClient(client, { newRequestId: () => 'r1' }).stream({ method: 'GET', url: URL }));
    first.deliver(D1);
    first.drop('peer vanished');
    sockets.next(second);
    second.deliver(D2);
    expect(seen.events).toEqual([head, body('part1-')]);
    expect(seen.error).toEqual(new TransportClosedError('remote', 1006, 'peer vanished'));
    expect(requestsOn(second)).toEqual([]);
  });
});
