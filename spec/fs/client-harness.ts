import type { Observable } from 'rxjs';
import { of, Subject } from 'rxjs';
import type { RemoteFileSystemOptions } from '../../src/fs/fs-options';
import { RemoteFileSystem } from '../../src/fs/remote-file-system';
import type { RpcConnection } from '../../src/rpc/rpc-connection';
import { ExecClient } from '../../src/session/exec-client';
import type { SocketPort } from '../../src/transport/socket-port';
import { FakeSocketPort } from '../support/fake-socket-port';
import { testScheduler } from '../support/marbles';

/** What a scripted method handler answers: a result, a JSON-RPC error, or nothing (the reply never comes). */
export type Reply = { readonly result: unknown } | { readonly error: { readonly code: number; readonly message: string } } | undefined;

/** Answers one request of a method; `peer` may also deliver notifications around the reply. */
export type Handler = (params: Record<string, unknown>, peer: FakeSocketPort) => Reply;

export const SESSION_ID = 'session-1';

/**
 * A FakeSocketPort scripted as an executor: `initialize` → `{sessionId}`, the `initialized` notification
 * is accepted silently, each other method is answered by its handler (no handler → -32601).
 */
export function executorPort(handlers: Readonly<Record<string, Handler>>): FakeSocketPort {
  return new FakeSocketPort((frame, peer) => {
    const { id, method } = frame;
    if (typeof method !== 'string' || id === undefined) return;
    if (method === 'initialize') return peer.deliver({ id, result: { sessionId: SESSION_ID } });
    const handler = handlers[method];
    const params = typeof frame.params === 'object' && frame.params !== null ? (frame.params as Record<string, unknown>) : {};
    const reply: Reply = handler === undefined ? { error: { code: -32601, message: `unknown method ${method}` } } : handler(params, peer);
    if (reply !== undefined) peer.deliver({ id, ...reply });
  });
}

/** `{}` for every call. */
export const ok =
  (result: unknown = {}): Handler =>
  () => ({ result });

/** What the client sent after the handshake (no `initialize` / `initialized`). */
export const requestsOn = (port: FakeSocketPort): Record<string, unknown>[] => port.sent.filter((m) => m.method !== 'initialize' && m.method !== 'initialized');

/**
 * A started ExecClient on `sockets$`. Its timers run on a TestScheduler that is never flushed, so no
 * real timer is ever armed: nothing in these specs waits in real time.
 */
export async function startClient(sockets$: Observable<SocketPort>, reconnectable: boolean): Promise<ExecClient> {
  const client = new ExecClient(sockets$, { clientName: 'spec', reconnectable, scheduler: testScheduler() });
  await client.start();
  return client;
}

/** A reconnectable client, started on `first`; `handIn(port)` gives it the next socket. */
export async function reconnectableClient(first: FakeSocketPort): Promise<{ readonly client: ExecClient; readonly handIn: (port: FakeSocketPort) => void }> {
  const sockets = new Subject<SocketPort>();
  const started = startClient(sockets, true);
  sockets.next(first);
  return { client: await started, handIn: (port) => sockets.next(port) };
}

/** A client on one scripted port (no reconnects). */
export const connectedTo = (port: FakeSocketPort): Promise<ExecClient> => startClient(of(port), false);

/** The connection the client is on now; throws when it is not connected. */
export function currentRpc(client: ExecClient): RpcConnection {
  const state = client.state;
  if (state.type !== 'connected') throw new Error(`client is ${state.type}`);
  return state.rpc;
}

/** Asserts nothing is left waiting on the current connection, then closes the client. */
export function closeIdle(client: ExecClient): void {
  const state = client.state;
  if (state.type === 'connected') expect(state.rpc.pendingCount).toBe(0);
  client.close();
}

/** A spec file's filesystems on scripted executors (see {@link scriptedFilesystems}). */
export interface ScriptedFilesystems {
  /** An executor answering with `handlers`, a client connected to it and its filesystem (handle ids `h1`, `h2`, …). */
  connect(handlers: Readonly<Record<string, Handler>>): Promise<{ readonly port: FakeSocketPort; readonly fs: RemoteFileSystem; readonly connected: ExecClient }>;
  /** Closes `client` after the test, as `connect`'s (for a client the test made itself); returns it. */
  track(client: ExecClient): ExecClient;
}

/**
 * Filesystems on scripted executors for one spec file, with `options` (handle ids `h1`, `h2`, … unless it
 * says otherwise): each test's client is closed in an `afterEach`, asserting nothing was left waiting on it.
 */
export function scriptedFilesystems(options: RemoteFileSystemOptions = {}): ScriptedFilesystems {
  let client: ExecClient | undefined;
  afterEach(() => {
    if (client !== undefined) closeIdle(client);
    client = undefined;
  });
  const track = (made: ExecClient): ExecClient => (client = made);
  return {
    track,
    connect: async (handlers) => {
      const port = executorPort(handlers);
      const connected = track(await connectedTo(port));
      let n = 0;
      return { port, fs: new RemoteFileSystem(connected, { newHandleId: () => `h${(n += 1)}`, ...options }), connected };
    },
  };
}

/**
 * An executor serving `content` through handles: `fs/open` echoes the handleId, `fs/readBlock` answers
 * the slice at `offset` (eof once the slice reaches the end), `fs/close` answers `{}`. `hold(offset)`
 * true leaves that read unanswered.
 */
export function fileHandlers(content: Buffer, hold: (offset: number) => boolean = () => false): Record<string, Handler> {
  return {
    'fs/open': (params) => ({ result: { handleId: params.handleId } }),
    'fs/readBlock': (params) => {
      const offset = Number(params.offset);
      if (hold(offset)) return undefined;
      const end = offset + Number(params.len);
      return { result: { chunk: content.subarray(offset, end).toString('base64'), eof: end >= content.length } };
    },
    'fs/writeBlock': ok(),
    'fs/close': ok(),
  };
}
