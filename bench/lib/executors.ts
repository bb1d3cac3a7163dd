/**
 * Executors and helper processes the bench starts, and their guaranteed teardown: every executor and
 * child is tracked here, stopped by its suite in a `finally`, and stopped again by `stopEverything()`
 * (run's own `finally`, SIGINT, SIGTERM). Stopping an executor (SIGTERM) makes it kill the process group
 * of every process it started.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';

const executors = new Set<SpawnedExecutor>();
const children = new Set<ChildProcess>();
const closers = new Set<{ close(): Promise<void> }>();

/** A listening executor (`codex exec-server --listen ws://127.0.0.1:0`). */
export async function startListening(): Promise<SpawnedExecutor & { readonly url: string }> {
  const executor = await spawnExecutor({ mode: 'listen' });
  executors.add(executor);
  if (executor.url === undefined) {
    await stopExecutor(executor);
    throw new Error('listening executor printed no url');
  }
  return { ...executor, url: executor.url };
}

/** Tracks an executor started elsewhere (a direct one joined to a host child) so that `stopEverything` stops it. */
export function trackExecutor<T extends SpawnedExecutor>(executor: T): T {
  executors.add(executor);
  return executor;
}

export async function stopExecutor(executor: SpawnedExecutor): Promise<void> {
  try {
    await executor.stop();
  } finally {
    executors.delete(executor);
  }
}

/** Runs `body` with `count` listening executors, stopping them all afterwards whatever happens. */
export async function withListening<T>(count: number, body: (urls: string[]) => Promise<T>): Promise<T> {
  const started: SpawnedExecutor[] = [];
  try {
    const spawned = await Promise.allSettled(Array.from({ length: count }, () => startListening()));
    for (const outcome of spawned) if (outcome.status === 'fulfilled') started.push(outcome.value);
    const failed = spawned.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined && failed.status === 'rejected') throw failed.reason;
    return await body(started.map((executor) => executor.url ?? ''));
  } finally {
    await Promise.all(started.map((executor) => stopExecutor(executor)));
  }
}

/** Tracks a child process (peer, memory probe) so that `stopEverything` kills it. */
export function trackChild(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Tracks a server-like helper (a proxy) so that `stopEverything` closes it. */
export function trackCloser<T extends { close(): Promise<void> }>(closer: T): T {
  closers.add(closer);
  return closer;
}

/** Stops every executor, child and server still running. Idempotent, never rejects. */
export async function stopEverything(): Promise<void> {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  await Promise.allSettled([...executors].map((executor) => stopExecutor(executor)));
  await Promise.allSettled([...closers].map((closer) => closer.close()));
  closers.clear();
}

/**
 * The host side of the direct transport: an environment registry (`POST
 * /cloud/environment/{id}/direct/register` → a ws url) and the acceptor of that url. Each environment id
 * gets its own url, so several direct executors can be connected at once. No authentication is checked.
 * The soak points the registered url at a proxy (`dialVia`) and takes every re-dial (`adopt`).
 */
export class DirectHost {
  private readonly waiting = new Map<string, (socket: WebSocket) => void>();
  private readonly adopters = new Map<string, (socket: WebSocket) => void>();
  private readonly dialUrls = new Map<string, string>();

  private constructor(
    private readonly server: Server,
    private readonly wss: WebSocketServer,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<DirectHost> {
    const wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 * 1024, perMessageDeflate: false });
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const host = new DirectHost(server, wss, `http://127.0.0.1:${port}`);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => host.onRequest(request, response));
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const match = /^\/connect\/([^/?]+)/.exec(request.url ?? '');
      if (match === null) {
        socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      const id = decodeURIComponent(match[1] ?? '');
      wss.handleUpgrade(request, socket, head, (ws) => host.accepted(id, ws));
    });
    closers.add(host);
    return host;
  }

  /** Starts a direct executor for `environmentId` and resolves with the socket it dialled in with. */
  async connectExecutor(environmentId: string, timeoutMs = 15_000): Promise<{ readonly executor: SpawnedExecutor; readonly socket: WebSocket }> {
    const arrived = this.nextSocket(environmentId);
    const executor = await spawnExecutor({
      mode: 'direct',
      remoteUrl: this.baseUrl,
      environmentId,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'bench-secret' },
    });
    executors.add(executor);
    try {
      let timer: NodeJS.Timeout | undefined;
      const socket = await Promise.race([
        arrived,
        executor.exited.then((exit) => {
          throw new Error(`direct executor exited (code ${String(exit.code)}): ${executor.stderrLines().slice(-3).join(' | ')}`);
        }),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`direct executor ${environmentId} did not dial in within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]).finally(() => clearTimeout(timer));
      return { executor, socket };
    } catch (error) {
      this.waiting.delete(environmentId);
      await stopExecutor(executor);
      throw error;
    }
  }

  /** The host's own port (what a proxy in front of it forwards to). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Registers `environmentId` with `url` (a proxy in front of this host) instead of this host's own. */
  dialVia(environmentId: string, url: string): void {
    this.dialUrls.set(environmentId, url);
  }

  /** Hands every later socket of `environmentId` that nobody waits for to `adopt` (re-dials). */
  adopt(environmentId: string, adopt: (socket: WebSocket) => void): void {
    this.adopters.set(environmentId, adopt);
  }

  /** The next socket dialled in for `environmentId`. */
  nextSocket(environmentId: string): Promise<WebSocket> {
    return new Promise<WebSocket>((resolve) => this.waiting.set(environmentId, resolve));
  }

  async close(): Promise<void> {
    closers.delete(this);
    this.adopters.clear();
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accepted(environmentId: string, socket: WebSocket): void {
    const waiter = this.waiting.get(environmentId);
    if (waiter !== undefined) {
      this.waiting.delete(environmentId);
      waiter(socket);
      return;
    }
    const adopter = this.adopters.get(environmentId);
    if (adopter !== undefined) return adopter(socket);
    // A re-dial nobody asked for (the executor reconnects after we closed its socket): refuse it.
    socket.terminate();
  }

  private onRequest(request: IncomingMessage, response: ServerResponse): void {
    const match = /^\/cloud\/environment\/([^/]+)\/direct\/register$/.exec(request.url ?? '');
    request.resume();
    if (request.method !== 'POST' || match === null) {
      response.writeHead(404).end();
      return;
    }
    const id = decodeURIComponent(match[1] ?? '');
    const url = this.dialUrls.get(id) ?? `ws://127.0.0.1:${this.port}/connect/${encodeURIComponent(id)}`;
    const body = JSON.stringify({ environment_id: id, transport: 'direct_jsonrpc_v1', registration_id: 'reg-1', url });
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
  }
}
