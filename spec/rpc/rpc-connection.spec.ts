import type { Subscription } from 'rxjs';
import { firstValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import { DecodeError, NotFoundError, RequestTimeoutError, RpcError, SpawnError, TransportClosedError } from '../../src/errors';
import type { Diagnostic } from '../../src/rpc/diagnostics';
import type { ProcessWireEvent } from '../../src/rpc/notification-router';
import { RpcConnection } from '../../src/rpc/rpc-connection';
import { FakeSocketPort } from '../support/fake-socket-port';
import { testScheduler } from '../support/marbles';

const open = (port: FakeSocketPort, options: ConstructorParameters<typeof RpcConnection>[1] = {}): { rpc: RpcConnection; diagnostics: Diagnostic[]; subscription: Subscription } => {
  const rpc = new RpcConnection(port, options);
  const diagnostics: Diagnostic[] = [];
  rpc.diagnostics$.subscribe((d) => diagnostics.push(d));
  return { rpc, diagnostics, subscription: rpc.open() };
};

describe('RpcConnection', () => {
  it('sends positive increasing ids and correlates replies that arrive out of order', () => {
    testScheduler().run(({ expectObservable, cold }) => {
      const port = new FakeSocketPort();
      const { rpc } = open(port);
      cold('--a', { a: 0 }).subscribe(() => port.deliver({ id: 2, result: { running: true } }));
      cold('----a', { a: 0 }).subscribe(() => port.deliver({ id: 1, result: { status: 'ready' } }));
      expectObservable(rpc.request('environment/status', undefined)).toBe('----(a|)', { a: { status: 'ready' } });
      expectObservable(rpc.request('process/terminate', { processId: 'p' })).toBe('--(a|)', { a: { running: true } });
    });
  });

  it('writes the codex dialect: no jsonrpc member, params omitted when the method has none', async () => {
    const port = new FakeSocketPort();
    const { rpc, subscription } = open(port);
    const calls = [rpc.call('environment/status', undefined), rpc.call('process/terminate', { processId: 'p1' })].map((c) => c.catch((e: unknown) => e));
    rpc.sendInitialized();
    // Each call is answered through the id it was written with (answered in reverse order).
    port.deliver({ id: 2, result: { running: false } });
    port.deliver({ id: 1, result: { status: 'ready' } });
    subscription.unsubscribe();
    expect(await Promise.all(calls)).toEqual([{ status: 'ready' }, { running: false }]);
    expect(port.sent).toEqual([
      { id: 1, method: 'environment/status' },
      { id: 2, method: 'process/terminate', params: { processId: 'p1' } },
      { method: 'initialized', params: {} },
    ]);
  });

  it('times out a call in virtual time with a RequestTimeoutError naming the method', () => {
    testScheduler().run(({ expectObservable }) => {
      const { rpc } = open(new FakeSocketPort());
      expectObservable(rpc.request('fs/readFile', { path: 'file:///x' }, { timeoutMs: 5_000 })).toBe('5000ms #', undefined, new RequestTimeoutError('fs/readFile', 5_000));
    });
  });

  it('stops waiting when unsubscribed and reports the late reply to diagnostics', () => {
    const port = new FakeSocketPort();
    const { rpc, diagnostics } = open(port);
    const values: unknown[] = [];
    rpc.request('environment/status', undefined).subscribe((v) => values.push(v)).unsubscribe();
    expect(rpc.pendingCount).toBe(0);
    port.deliver({ id: 1, result: { status: 'ready' } });
    expect(values).toEqual([]);
    expect(diagnostics).toEqual([{ type: 'unknownResponse', id: 1 }]);
  });

  it('fails a call with the signal\'s own reason when it aborts: a DOMException AbortError by default, the same object', async () => {
    const port = new FakeSocketPort();
    const { rpc, diagnostics } = open(port);
    const controller = new AbortController();
    const pending = rpc.call('environment/status', undefined, { signal: controller.signal });
    controller.abort();
    const error: unknown = await pending.then(() => undefined, (e: unknown) => e);
    expect(error).toBe(controller.signal.reason);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(rpc.pendingCount).toBe(0);
    // The request was sent; its late reply goes to diagnostics.
    expect(port.sent).toEqual([{ id: 1, method: 'environment/status' }]);
    port.deliver({ id: 1, result: { status: 'ready' } });
    expect(diagnostics).toEqual([{ type: 'unknownResponse', id: 1 }]);
  });

  it('rejects with a custom reason as given, identity-equal, and at once with nothing sent when already aborted', async () => {
    const port = new FakeSocketPort();
    const { rpc } = open(port);
    const reason = new Error('user pressed cancel');
    const controller = new AbortController();
    controller.abort(reason);
    await expect(rpc.call('environment/status', undefined, { signal: controller.signal })).rejects.toBe(reason);
    const values: unknown[] = [];
    let failure: unknown;
    rpc.request('environment/status', undefined, { signal: controller.signal }).subscribe({ next: (v) => values.push(v), error: (e: unknown) => (failure = e) });
    expect(failure).toBe(reason);
    expect(values).toEqual([]);
    expect(port.sent).toEqual([]);
    expect(rpc.pendingCount).toBe(0);
    const other = new AbortController();
    const pending = rpc.call('environment/status', undefined, { signal: other.signal });
    other.abort('a string reason');
    await expect(pending).rejects.toBe('a string reason');
  });

  it('settles every pending call with the same typed error when the socket closes', async () => {
    const port = new FakeSocketPort();
    const { rpc } = open(port);
    const calls = Array.from({ length: 50 }, (_, i) => rpc.call('process/terminate', { processId: `p${i}` }));
    port.drop('peer vanished');
    const errors = await Promise.all(calls.map((c) => c.then(() => undefined, (e: unknown) => e)));
    expect(new Set(errors).size).toBe(1);
    expect(errors[0]).toBeInstanceOf(TransportClosedError);
    expect(errors[0]).toMatchObject({ initiator: 'remote', message: 'exec-server transport disconnected: peer vanished' });
    await expect(rpc.call('environment/status', undefined)).rejects.toBe(errors[0]);
    expect(rpc.pendingCount).toBe(0);
  });

  it('records that we closed it ourselves', async () => {
    const port = new FakeSocketPort();
    const { rpc, subscription } = open(port);
    const call = rpc.call('environment/status', undefined);
    subscription.unsubscribe();
    await expect(call).rejects.toMatchObject({ initiator: 'local' });
    expect(port.closedWith?.initiator).toBe('local');
  });

  it('reports an error with id -1 to diagnostics and keeps the connection up', async () => {
    const port = new FakeSocketPort();
    const { rpc, diagnostics } = open(port);
    const call = rpc.call('environment/status', undefined);
    port.deliver({ id: -1, error: { code: -32600, message: 'failed to parse websocket JSON-RPC message' } });
    port.deliver({ id: 1, result: { status: 'ready' } });
    await expect(call).resolves.toEqual({ status: 'ready' });
    expect(diagnostics).toEqual([{ type: 'unattributedError', error: expect.any(RpcError) }]);
    expect(port.isOpen).toBe(true);
  });

  it('ignores a duplicate response after the first one answered the call', async () => {
    const port = new FakeSocketPort();
    const { rpc, diagnostics } = open(port);
    const call = rpc.call('process/terminate', { processId: 'p' });
    port.deliver({ id: 1, result: { running: true } });
    port.deliver({ id: 1, result: { running: false } });
    await expect(call).resolves.toEqual({ running: true });
    expect(diagnostics).toEqual([{ type: 'unknownResponse', id: 1 }]);
  });

  it('reports a reply to an id it never sent and an unparsable frame, losing nothing before them', async () => {
    const port = new FakeSocketPort();
    const { rpc, diagnostics } = open(port);
    const call = rpc.call('environment/status', undefined);
    port.deliver({ id: 99, result: {} });
    port.deliver('{not json');
    port.deliver({ id: 1, result: { status: 'ready' } });
    await expect(call).resolves.toEqual({ status: 'ready' });
    expect(diagnostics.map((d) => d.type)).toEqual(['unknownResponse', 'unparsableFrame']);
  });

  it('accepts a binary frame holding JSON', async () => {
    const port = new FakeSocketPort();
    const { rpc } = open(port);
    const call = rpc.call('environment/status', undefined);
    port.deliverBinary(Buffer.from(JSON.stringify({ id: 1, result: { status: 'ready' } })));
    await expect(call).resolves.toEqual({ status: 'ready' });
  });

  it('fails only the call whose result fails its codec, with a DecodeError naming the path', async () => {
    const port = new FakeSocketPort();
    const { rpc } = open(port);
    const bad = rpc.call('process/terminate', { processId: 'p' });
    const good = rpc.call('process/terminate', { processId: 'q' });
    port.deliver({ id: 1, result: { running: 'yes' } });
    port.deliver({ id: 2, result: { running: false } });
    const error = await bad.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(DecodeError);
    expect(String(error)).toContain('running');
    await expect(good).resolves.toEqual({ running: false });
  });

  it('maps server errors to typed errors carrying code, message and data', async () => {
    const port = new FakeSocketPort();
    const { rpc } = open(port);
    const start = rpc.call('process/start', { processId: 'p', argv: ['nope'], cwd: 'file:///tmp', env: {}, tty: false });
    const read = rpc.call('fs/readFile', { path: 'file:///missing' });
    const other = rpc.call('process/terminate', { processId: 'p' });
    port.deliver({ id: 1, error: { code: -32603, message: 'No such file or directory (os error 2)', data: { kind: 'spawnNotFound' } } });
    port.deliver({ id: 2, error: { code: -32004, message: 'No such file or directory (os error 2)' } });
    port.deliver({ id: 3, error: { code: -32600, message: 'unknown process id p' } });
    await expect(start).rejects.toMatchObject({ code: 'SPAWN_FAILED', kind: 'spawnNotFound', rpcCode: -32603 });
    await expect(start).rejects.toBeInstanceOf(SpawnError);
    await expect(read).rejects.toBeInstanceOf(NotFoundError);
    await expect(other).rejects.toMatchObject({ code: 'RPC_ERROR', rpcCode: -32600, message: 'exec-server rejected process/terminate (-32600): unknown process id p' });
  });

  it('refuses to send a frame over the limit and sends nothing', async () => {
    const port = new FakeSocketPort();
    const { rpc } = open(port, { maxOutboundFrameBytes: 1024 });
    await expect(rpc.call('fs/writeFile', { path: 'file:///x', dataBase64: Buffer.alloc(2048) })).rejects.toMatchObject({ code: 'FRAME_TOO_LARGE', method: 'fs/writeFile' });
    expect(port.sent).toEqual([]);
  });

  it('answers an unknown server request with -32601', () => {
    const port = new FakeSocketPort();
    open(port);
    port.deliver({ id: 7, method: 'bogus/ask', params: {} });
    expect(port.sent).toEqual([{ id: 7, error: { code: -32601, message: 'exec-server client does not implement `bogus/ask` yet' } }]);
  });

  it('routes process notifications by processId and others by method', async () => {
    const port = new FakeSocketPort();
    const { rpc, diagnostics } = open(port);
    const p1: ProcessWireEvent[] = [];
    let p1Completed = false;
    rpc.routeProcess('p1', { next: (event) => p1.push(event), complete: () => (p1Completed = true) });
    const watch = firstValueFrom(rpc.notifications('fs/missingChanged').pipe(toArray()));
    port.deliver({ method: 'process/output', params: { processId: 'p1', seq: 1, stream: 'stdout', chunk: 'aGk=' } });
    port.deliver({ method: 'process/output', params: { processId: 'p2', seq: 1, stream: 'stdout', chunk: 'aGk=' } });
    port.deliver({ method: 'process/exited', params: { processId: 'p1', seq: 2, exitCode: 0, sandboxDenied: false } });
    port.deliver({ method: 'process/output', params: { processId: 'p1', seq: 'three', stream: 'stdout', chunk: 'aGk=' } });
    port.deliver({ method: 'fs/missingChanged', params: { watchId: 4 } });
    port.deliver({ method: 'brand/new', params: {} });
    port.drop();
    // The route ends with the connection.
    expect({ events: p1, completed: p1Completed }).toEqual({
      events: [
        { type: 'output', seq: 1, stream: 'stdout', chunk: Buffer.from('hi') },
        { type: 'exited', seq: 2, exitCode: 0, sandboxDenied: false },
        { type: 'malformed', method: 'process/output', error: expect.any(DecodeError) },
      ],
      completed: true,
    });
    expect(await watch).toEqual([{ watchId: 4 }]);
    expect(diagnostics).toEqual([{ type: 'unknownNotification', method: 'brand/new' }]);
  });

  it('hands notification subscribers params typed by method and decoded once; params that fail the codec go to diagnostics only', async () => {
    const port = new FakeSocketPort();
    const { rpc, diagnostics } = open(port);
    const first = firstValueFrom(rpc.notifications('http/request/bodyDelta').pipe(toArray()));
    const second = firstValueFrom(rpc.notifications('http/request/bodyDelta').pipe(toArray()));
    const watches = firstValueFrom(rpc.notifications('fs/missingChanged').pipe(toArray()));
    port.deliver({ method: 'http/request/bodyDelta', params: { requestId: 'r1', seq: 1, deltaBase64: 'aGk=', done: false, error: null } });
    port.deliver({ method: 'http/request/bodyDelta', params: { requestId: 'r1', seq: 'two', deltaBase64: 'aGk=', done: false, error: null } });
    port.deliver({ method: 'fs/missingChanged', params: { watchId: -3 } });
    port.deliver({ method: 'fs/missingChanged', params: { watchId: 3 } });
    port.drop();
    const [deltas, sameDeltas, changes] = await Promise.all([first, second, watches]);
    // The method carries the params' type: bytes are already decoded, no check left to the subscriber.
    const typed: { readonly requestId: string; readonly deltaBase64: Uint8Array }[] = deltas;
    const watchIds: number[] = changes.map((change) => change.watchId);
    expect({ typed, watchIds }).toEqual({ typed: [{ requestId: 'r1', seq: 1, deltaBase64: Buffer.from('hi'), done: false, error: null }], watchIds: [3] });
    expect(sameDeltas[0]).toBe(deltas[0]);
    expect(diagnostics).toEqual([
      { type: 'malformedNotification', method: 'http/request/bodyDelta', error: expect.any(DecodeError) },
      { type: 'malformedNotification', method: 'fs/missingChanged', error: expect.any(DecodeError) },
    ]);
    // Closed: a new subscriber completes at once.
    expect(await firstValueFrom(rpc.notifications('network/policyDecision').pipe(toArray()))).toEqual([]);
  });

  it('takes only the methods routed by method; any other string (from untyped code) never emits and completes on close', async () => {
    const port = new FakeSocketPort();
    const { rpc } = open(port);
    // @ts-expect-error: process notifications are routed by processId (routeProcess), not by method
    const processOutput = firstValueFrom(rpc.notifications('process/output').pipe(toArray()));
    // @ts-expect-error: a method the executor does not send has no params type
    const unknown = firstValueFrom(rpc.notifications('brand/new').pipe(toArray()));
    // @ts-expect-error: an Object.prototype member is no method either
    const inherited = firstValueFrom(rpc.notifications('toString').pipe(toArray()));
    port.deliver({ method: 'process/output', params: { processId: 'p1', seq: 1, stream: 'stdout', chunk: 'aGk=' } });
    port.deliver({ method: 'brand/new', params: {} });
    port.drop();
    expect(await Promise.all([processOutput, unknown, inherited])).toEqual([[], [], []]);
  });

  it('declares a silent peer dead when a keepalive ping gets no pong in time', () => {
    testScheduler().run(({ expectObservable, cold }) => {
      const port = new FakeSocketPort();
      const { rpc } = open(port, { keepalive: { intervalMs: 30_000, timeoutMs: 10_000 } });
      // The first ping is answered, the second is not.
      cold('30001ms a').subscribe(() => port.pong());
      expectObservable(rpc.closed$).toBe('70000ms (a|)', { a: new TransportClosedError('remote', 1006, 'no pong from fake within 10000ms') });
    });
  });
});
