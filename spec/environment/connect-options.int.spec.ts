import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { createServer } from 'node:net';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { EnvironmentManager } from '../../src/environment/environment-manager';
import type { ConnectionState } from '../../src/environment/connection-state';
import { DialHeadersError, ResumeFailedError } from '../../src/errors';
import { listenOnLoopback } from '../support/listen-on-loopback';

/**
 * A fake listening executor on a real loopback ws server: it records each upgrade's Authorization
 * header and answers `initialize` with session `s-1` (resumes included); other requests go unanswered.
 */
class FakeListeningExecutor {
  readonly authorizations: Array<string | undefined> = [];
  readonly sockets: WebSocket[] = [];
  private readonly server: WebSocketServer;
  private readonly waiters: Array<() => void> = [];

  private constructor(server: WebSocketServer) {
    this.server = server;
    server.on('connection', (socket: WebSocket, request: IncomingMessage) => {
      this.authorizations.push(request.headers.authorization);
      this.sockets.push(socket);
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as { id?: number; method?: string };
        if (message.method === 'initialize') socket.send(JSON.stringify({ id: message.id, result: { sessionId: 's-1' } }));
      });
      for (const waiter of this.waiters.splice(0)) waiter();
    });
  }

  static async start(): Promise<FakeListeningExecutor> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    return new FakeListeningExecutor(server);
  }

  get url(): string {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    return `ws://127.0.0.1:${address.port}`;
  }

  /** Resolves once `count` sockets have connected in all. */
  async connections(count: number): Promise<void> {
    while (this.sockets.length < count) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Resolves once the socket `index` is closed (by either side). */
  closed(index: number): Promise<void> {
    const socket = this.sockets[index];
    if (socket === undefined) return Promise.reject(new Error(`no socket ${index}`));
    if (socket.readyState === socket.CLOSED) return Promise.resolve();
    return new Promise<void>((resolve) => socket.once('close', () => resolve()));
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const state = (manager: EnvironmentManager, wanted: ConnectionState['state']): Promise<ConnectionState> => {
  const environment = manager.defaultEnvironment();
  if (environment === undefined) throw new Error('no environment');
  return firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === wanted)));
};

const rejection = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => 'resolved', (error: unknown) => error);

describe('EnvironmentManager.connect options (headers, signal, await using)', () => {
  let executor: FakeListeningExecutor;
  const managers: EnvironmentManager[] = [];

  beforeEach(async () => {
    executor = await FakeListeningExecutor.start();
  });

  afterEach(async () => {
    for (const manager of managers.splice(0)) await manager.close();
    await executor.stop();
  });

  const connect = async (options: Parameters<typeof EnvironmentManager.connect>[2]): Promise<EnvironmentManager> => {
    const manager = await EnvironmentManager.connect('env', executor.url, { keepalive: false, ...options });
    managers.push(manager);
    return manager;
  };

  it('sends headers given as a value', async () => {
    await connect({ clientName: 'spec', headers: { Authorization: 'Bearer fixed' } });
    expect(executor.authorizations).toEqual(['Bearer fixed']);
  });

  it.each([
    ['a function', (n: number) => ({ Authorization: `Bearer token-${n}` })],
    ['an async function', (n: number) => Promise.resolve({ Authorization: `Bearer token-${n}` })],
  ])('evaluates headers given as %s again on the re-dial after a drop, so a refreshed token is used', async (_name, make) => {
    let calls = 0;
    const manager = await connect({
      clientName: 'spec',
      headers: () => {
        calls += 1;
        return make(calls);
      },
    });
    const recovering = state(manager, 'disconnected');
    executor.sockets[0]?.terminate();
    await recovering;
    await executor.connections(2);
    await state(manager, 'connected');
    expect(executor.authorizations).toEqual(['Bearer token-1', 'Bearer token-2']);
  });

  it('rejects connect with DialHeadersError (cause: what the function threw) when the headers function rejects; no socket is opened', async () => {
    const secret = new Error('token service unavailable');
    const error = await rejection(EnvironmentManager.connect('env', executor.url, { clientName: 'spec', keepalive: false, headers: () => Promise.reject(secret) }));
    expect(error).toBeInstanceOf(DialHeadersError);
    expect((error as DialHeadersError).code).toBe('DIAL_HEADERS_FAILED');
    expect((error as DialHeadersError).cause).toBe(secret);
    expect((error as DialHeadersError).message).not.toContain('token service');
    expect(executor.sockets).toEqual([]);
  });

  it('on a re-dial, a throwing headers function shows as the disconnected error and is retried until it works again', async () => {
    let calls = 0;
    const manager = await connect({
      clientName: 'spec',
      headers: () => {
        calls += 1;
        if (calls === 2) throw new Error('refresh failed');
        return { Authorization: `Bearer token-${calls}` };
      },
    });
    const environment = manager.defaultEnvironment();
    if (environment === undefined) throw new Error('no environment');
    const headersFailed = firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === 'disconnected' && s.error instanceof DialHeadersError)));
    executor.sockets[0]?.terminate();
    await headersFailed;
    await executor.connections(2);
    await state(manager, 'connected');
    expect(executor.authorizations).toEqual(['Bearer token-1', 'Bearer token-3']);
  });

  it('a headers function that keeps failing on re-dials is retried only until the recovery deadline: failed, cause the DialHeadersError', async () => {
    let calls = 0;
    const manager = await connect({
      clientName: 'spec',
      recoveryDeadlineMs: 300,
      headers: () => {
        calls += 1;
        if (calls > 1) throw new Error('refresh failed');
        return { Authorization: 'Bearer token-1' };
      },
    });
    const failed = state(manager, 'failed');
    executor.sockets[0]?.terminate();
    const final = await failed;
    const error = final.state === 'failed' ? final.error : undefined;
    expect(error).toBeInstanceOf(ResumeFailedError);
    expect(error?.cause).toBeInstanceOf(DialHeadersError);
    expect(calls).toBeGreaterThan(1);
    expect(executor.sockets).toHaveLength(1);
  });

  it('an already-aborted signal rejects connect at once with its reason, nothing dialled', async () => {
    const controller = new AbortController();
    const reason = new Error('gave up');
    controller.abort(reason);
    expect(await rejection(EnvironmentManager.connect('env', executor.url, { clientName: 'spec', signal: controller.signal }))).toBe(reason);
    expect(executor.sockets).toEqual([]);
  });

  it('aborted mid-dial, connect rejects with the reason and closes the socket it was opening', async () => {
    // A server that accepts TCP but never answers the upgrade: the dial stays open until aborted.
    const accepted: Socket[] = [];
    let arrived: () => void = () => undefined;
    const tcp = createServer((socket) => {
      accepted.push(socket);
      arrived();
    });
    const port = await listenOnLoopback(tcp, 'silent server');
    try {
      const controller = new AbortController();
      const connecting = rejection(EnvironmentManager.connect('env', `ws://127.0.0.1:${port}`, { clientName: 'spec', keepalive: false, signal: controller.signal }));
      await new Promise<void>((resolve) => {
        arrived = resolve;
        if (accepted.length > 0) resolve();
      });
      const socket = accepted[0];
      if (socket === undefined) throw new Error('no connection');
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      controller.abort();
      expect(await connecting).toBe(controller.signal.reason);
      expect((controller.signal.reason as DOMException).name).toBe('AbortError');
      await closed;
    } finally {
      for (const socket of accepted) socket.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    }
  });

  it('await using closes the manager when the scope ends', async () => {
    let inScope: EnvironmentManager | undefined;
    {
      await using manager = await EnvironmentManager.connect('env', executor.url, { clientName: 'spec', keepalive: false });
      inScope = manager;
      await executor.connections(1);
    }
    await executor.closed(0);
    expect(inScope.defaultEnvironment()?.client.state.type).toBe('closed');
  });
});
