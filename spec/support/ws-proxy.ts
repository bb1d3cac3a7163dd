/**
 * A raw TCP proxy on 127.0.0.1:0 in front of a WebSocket server, for simulating network loss. `pause()`
 * kills every live connection and then accepts-and-destroys new ones at the TCP level. It deliberately
 * never answers HTTP: a 4xx makes a direct-mode executor exit (and kill its processes), and a 409 makes
 * it re-register (docs/protocol.md#re-dial-and-reconnect), whereas a dropped TCP connection makes it
 * re-dial the same URL.
 */
import { connect, createServer } from 'node:net';
import { listenOnLoopback } from './listen-on-loopback';
import type { Socket } from 'node:net';

/** Where the proxy forwards to: `ws://host:port/path`, `host:port`, or a port on 127.0.0.1. */
export type ProxyTarget = string | number;

/** Called with the 1-based number of every connection let through. */
export type ConnectionListener = (connectionNo: number) => void;

/** A running proxy. */
export interface DisconnectableProxy {
  /** `ws://127.0.0.1:PORT` plus the target's path and query: the URL clients should dial. */
  readonly url: string;
  /** The proxy's own port on 127.0.0.1. */
  readonly port: number;
  /** Connections let through so far (not counting ones refused while paused). */
  readonly connectionCount: number;
  /** Connections accepted and destroyed at once while paused. */
  readonly acceptedWhilePaused: number;
  /** Connections currently open through the proxy. */
  readonly liveConnections: number;
  /** Whether new connections are currently refused. */
  readonly paused: boolean;
  /** Destroys every live connection (both sides); from now on new connections are accepted then destroyed. */
  pause(): void;
  /** Lets new connections through again. */
  resume(): void;
  /** Registers a listener for connections let through; returns the function that removes it. */
  onConnection(listener: ConnectionListener): () => void;
  /**
   * Resolves with the connection number once `connectionCount` reaches `count` (default: one more than
   * now). Capture the count *before* causing the reconnection to avoid racing it. Rejects after `timeoutMs`.
   */
  waitForConnection(count?: number, timeoutMs?: number): Promise<number>;
  /** Stops listening and destroys every socket; resolves when all are closed. */
  close(): Promise<void>;
}

function parseTarget(target: ProxyTarget): { host: string; port: number; path: string } {
  if (typeof target === 'number') return { host: '127.0.0.1', port: target, path: '' };
  if (target.includes('://')) {
    const url = new URL(target);
    const path = url.pathname === '/' && url.search === '' ? '' : `${url.pathname}${url.search}`;
    return { host: url.hostname, port: Number(url.port), path };
  }
  const colon = target.lastIndexOf(':');
  return { host: target.slice(0, colon), port: Number(target.slice(colon + 1)), path: '' };
}

/** Destroys a socket and resolves when its handle is closed. */
function destroyed(socket: Socket): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    socket.destroy();
  });
}

/** Starts a proxy in front of `target`. */
export async function startDisconnectableProxy(target: ProxyTarget): Promise<DisconnectableProxy> {
  const { host, port: targetPort, path } = parseTarget(target);
  const sockets = new Set<Socket>();
  const pairs = new Set<readonly [Socket, Socket]>();
  const listeners = new Set<ConnectionListener>();
  const aborts = new Set<(reason: string) => void>();
  let connectionCount = 0;
  let acceptedWhilePaused = 0;
  let paused = false;

  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  };

  const server = createServer((client) => {
    track(client);
    if (paused) {
      acceptedWhilePaused += 1;
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, host);
    track(upstream);
    const pair = [client, upstream] as const;
    pairs.add(pair);
    const teardown = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.once('close', teardown);
    upstream.once('close', teardown);
    client.pipe(upstream);
    upstream.pipe(client);
    connectionCount += 1;
    for (const listener of [...listeners]) listener(connectionCount);
  });

  const port = await listenOnLoopback(server, 'proxy');

  let closing: Promise<void> | undefined;
  return {
    url: `ws://127.0.0.1:${port}${path}`,
    port,
    get connectionCount() {
      return connectionCount;
    },
    get acceptedWhilePaused() {
      return acceptedWhilePaused;
    },
    get liveConnections() {
      return pairs.size;
    },
    get paused() {
      return paused;
    },
    pause: () => {
      paused = true;
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
    },
    resume: () => {
      paused = false;
    },
    onConnection: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    waitForConnection: (count = connectionCount + 1, timeoutMs = 10_000) => {
      if (connectionCount >= count) return Promise.resolve(connectionCount);
      return new Promise<number>((resolve, reject) => {
        const finish = (): void => {
          clearTimeout(timer);
          listeners.delete(listener);
          aborts.delete(abort);
        };
        const listener = (no: number): void => {
          if (no < count) return;
          finish();
          resolve(no);
        };
        const abort = (reason: string): void => {
          finish();
          reject(new Error(`proxy: ${reason}`));
        };
        const timer = setTimeout(() => abort(`${connectionCount} of ${count} connections after ${timeoutMs} ms`), timeoutMs);
        listeners.add(listener);
        aborts.add(abort);
      });
    },
    close: () => {
      closing ??= (async () => {
        paused = true;
        for (const abort of [...aborts]) abort('closed');
        const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
        await Promise.all([...sockets].map(destroyed));
        await serverClosed;
      })();
      return closing;
    },
  };
}
