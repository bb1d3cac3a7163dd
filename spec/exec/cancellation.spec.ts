import type { Subject } from 'rxjs';
import { ClosedError, ProcessFailedError } from '../../src/errors';
import { ExecBackend } from '../../src/exec/exec-backend';
import { RemoteFileSystem } from '../../src/fs/remote-file-system';
import type { ExecClient } from '../../src/session/exec-client';
import type { PeerScript } from '../support/fake-socket-port';
import { connectedClient, listEndingWith } from '../support/scripted-client';
import { FakeSocketPort } from '../support/fake-socket-port';

type Handler = (params: Record<string, unknown>, peer: FakeSocketPort, id: unknown) => void;

/** A scripted executor: initialize answers session-1, process/start when `start` says so, the rest by handler (unanswered when none). */
const executor = (handlers: Record<string, Handler> = {}, answerStart = true): FakeSocketPort => {
  const script: PeerScript = (frame, peer) => {
    const method = frame['method'];
    if (typeof method !== 'string' || !('id' in frame)) return;
    if (method === 'initialize') return peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
    if (method === 'process/start' && answerStart) return peer.deliver({ id: frame['id'], result: { processId: (frame['params'] as { processId: string }).processId, sandboxType: 'none' } });
    handlers[method]?.(frame['params'] as Record<string, unknown>, peer, frame['id']);
  };
  return new FakeSocketPort(script);
};

/** What the spec sent after the handshake: method names (and processId when there is one). */
const calls = (port: FakeSocketPort): string[] =>
  port.sent
    .filter((f) => f['method'] !== 'initialize' && f['method'] !== 'initialized')
    .map((f) => {
      const params = f['params'] as { processId?: string } | undefined;
      return params?.processId === undefined ? String(f['method']) : `${String(f['method'])} ${params.processId}`;
    });

const exited = (seq: number, exitCode: number): Record<string, unknown> => ({ method: 'process/exited', params: { processId: 'p', seq, exitCode, sandboxDenied: false } });
const closed = (seq: number): Record<string, unknown> => ({ method: 'process/closed', params: { processId: 'p', seq } });
const output = (seq: number, text: string): Record<string, unknown> => ({ method: 'process/output', params: { processId: 'p', seq, stream: 'stdout', chunk: Buffer.from(text).toString('base64') } });

async function started(first: FakeSocketPort, historyEvents?: number): Promise<{ client: ExecClient; sockets: Subject<FakeSocketPort>; backend: ExecBackend }> {
  const { client, sockets } = await connectedClient(first);
  return { client, sockets, backend: new ExecBackend(client, () => (historyEvents === undefined ? {} : { historyEvents }), listEndingWith(client)) };
}

const rejection = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => 'resolved', (error: unknown) => error);

describe('cancellation with an AbortSignal', () => {
  it('start with an already-aborted signal rejects at once with its reason and sends nothing', async () => {
    const port = executor();
    const { client, backend } = await started(port);
    const controller = new AbortController();
    const reason = new Error('not any more');
    controller.abort(reason);
    expect(await rejection(backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' }, { signal: controller.signal }))).toBe(reason);
    expect(calls(port)).toEqual([]);
    client.close();
  });

  it('start aborted once sent rejects with the same reason object and terminates that processId (best effort)', async () => {
    const port = executor({}, false);
    const { client, backend } = await started(port);
    const controller = new AbortController();
    const starting = rejection(backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' }, { signal: controller.signal }));
    await Promise.resolve();
    expect(calls(port)).toEqual(['process/start p']);
    controller.abort();
    const error = await starting;
    expect(error).toBe(controller.signal.reason);
    expect((error as DOMException).name).toBe('AbortError');
    expect(calls(port)).toEqual(['process/start p', 'process/terminate p']);
    client.close();
  });

  it('write: aborted before, nothing is sent; aborted while waiting for the reply, it rejects with the reason and the writeId stays used', async () => {
    const port = executor();
    const { client, backend } = await started(port);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp', pipeStdin: true });
    const before = new AbortController();
    before.abort('early');
    expect(await rejection(process.write('a', undefined, { signal: before.signal }))).toBe('early');
    expect(calls(port)).toEqual(['process/start p']);
    const during = new AbortController();
    const writing = rejection(process.write('b', undefined, { signal: during.signal }));
    await Promise.resolve();
    during.abort();
    expect(await writing).toBe(during.signal.reason);
    expect(calls(port)).toEqual(['process/start p', 'process/write p']);
    expect(process.nextWriteId).toBe(2);
    client.close();
  });

  it('terminate aborted while it waits for recovery rejects with the reason, and nothing goes out on the next socket', async () => {
    const first = executor();
    const { client, sockets, backend } = await started(first);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    client.markRecovering('replaced');
    const controller = new AbortController();
    const terminating = rejection(process.terminate({ signal: controller.signal }));
    const reason = { why: 'custom reason object' };
    controller.abort(reason);
    expect(await terminating).toBe(reason);
    const second = executor({ 'process/read': (_params, peer, id) => peer.deliver({ id, result: { chunks: [], nextSeq: 1, exited: false, exitCode: null, closed: false, failure: null, sandboxDenied: false } }) });
    sockets.next(second);
    await new Promise<void>((resolve) => {
      client.state$.subscribe((s) => s.type === 'connected' && resolve());
    });
    expect(calls(second)).toEqual(['process/read p']);
    client.close();
  });

  it('signal and read aborted while waiting reject with the reason', async () => {
    const port = executor();
    const { client, backend } = await started(port);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const controller = new AbortController();
    const signalling = rejection(process.interrupt({ signal: controller.signal }));
    const reading = rejection(process.read(0, null, 60_000, { signal: controller.signal }));
    await Promise.resolve();
    controller.abort();
    expect(await signalling).toBe(controller.signal.reason);
    expect(await reading).toBe(controller.signal.reason);
    // The read was still waiting on the local stream: nothing went out for it.
    expect(calls(port)).toEqual(['process/start p', 'process/signal p']);
    client.close();
  });

  it('collect aborted rejects with the reason and leaves the process running; a later collect gets everything', async () => {
    const port = executor();
    const { client, backend } = await started(port);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    port.deliver(output(1, 'hello '));
    const controller = new AbortController();
    const collecting = rejection(process.collect({ signal: controller.signal }));
    controller.abort();
    expect(await rejection(process.collect({ signal: controller.signal }))).toBe(controller.signal.reason);
    expect(await collecting).toBe(controller.signal.reason);
    expect(process.state).toBe('running');
    expect(process.retained.subscribers).toBe(0);
    const all = process.collect();
    port.deliver(output(2, 'world'));
    port.deliver(exited(3, 0));
    port.deliver(closed(4));
    expect(await all).toEqual({ stdout: 'hello world', stderr: '', pty: '', exitCode: 0 });
    client.close();
  });

  it('a filesystem call aborted while it waits for recovery rejects with the reason, nothing sent', async () => {
    const first = executor();
    const { client } = await started(first);
    const fs = new RemoteFileSystem(client);
    client.markRecovering('replaced');
    const controller = new AbortController();
    const reading = rejection(fs.readFile('/etc/hostname', { signal: controller.signal }));
    controller.abort('cancelled by user');
    expect(await reading).toBe('cancelled by user');
    expect(calls(first)).toEqual([]);
    client.close();
  });

  it('resize aborted before rejects at once with the reason', async () => {
    const port = executor();
    const { client, backend } = await started(port);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const controller = new AbortController();
    controller.abort();
    expect(await rejection(process.resize(10, 10, { signal: controller.signal }))).toBe(controller.signal.reason);
    client.close();
  });
});

describe('ExecProcess.wait', () => {
  it('resolves with the exit code once the process exits, before closed', async () => {
    const port = executor();
    const { client, backend } = await started(port);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const waiting = process.wait();
    port.deliver(exited(1, 3));
    expect(await waiting).toEqual({ exitCode: 3 });
    client.close();
  });

  it('resolves at once for a process that already exited, even after the exited event left the bounded history', async () => {
    const port = executor();
    const { client, backend } = await started(port, 1);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    port.deliver(exited(1, 7));
    port.deliver(closed(2));
    expect(process.historyStartSeq).toBe(2);
    expect(await process.wait()).toEqual({ exitCode: 7 });
    client.close();
  });

  it('rejects with the process failure (ProcessFailedError, its cause the ClosedError) when its client closes, at once afterwards', async () => {
    const port = executor();
    const { client, backend } = await started(port);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const waiting = rejection(process.wait());
    client.close('manager closed');
    const error = await waiting;
    expect(error).toBeInstanceOf(ProcessFailedError);
    expect((error as ProcessFailedError).cause).toBeInstanceOf(ClosedError);
    expect(error).toBe(process.failure);
    expect(await rejection(process.wait())).toBe(process.failure);
  });

  it('aborted, it rejects with the reason and leaves the process running', async () => {
    const port = executor();
    const { client, backend } = await started(port);
    const { process } = await backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' });
    const controller = new AbortController();
    const waiting = rejection(process.wait({ signal: controller.signal }));
    controller.abort();
    expect(await waiting).toBe(controller.signal.reason);
    expect(process.state).toBe('running');
    expect(calls(port)).toEqual(['process/start p']);
    client.close();
  });
});
