/**
 * A disconnectable TCP proxy on 127.0.0.1 for the soak (the same idea as spec/support/ws-proxy.ts):
 * `pause()` destroys every live connection and then accepts-and-destroys new ones, so a direct-mode
 * executor sees its socket drop and re-dials; `resume()` lets connections through again. Stopped by
 * `stopEverything()` like the other helpers.
 */
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { trackCloser } from './executors';

export interface TcpProxy {
  readonly port: number;
  /** Connections let through so far. */
  readonly connections: number;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<readonly [Socket, Socket]>();
  let paused = false;
  let connections = 0;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    track(client);
    if (paused) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
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
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: TcpProxy = {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
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
    close: async () => {
      paused = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
  return trackCloser(proxy);
}
