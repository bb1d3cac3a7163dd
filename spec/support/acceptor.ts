import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { listenOnLoopback } from './listen-on-loopback';

/** A `ws` acceptor on 127.0.0.1:0 (where the seed uses axum): every upgrade becomes an accepted socket. */
export interface Acceptor {
  readonly url: string;
  /** The next accepted socket (already open). */
  nextAccepted(): Promise<WebSocket>;
  close(): Promise<void>;
}

export async function startAcceptor(): Promise<Acceptor> {
  const server: Server = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 * 1024 });
  const queue: WebSocket[] = [];
  const waiters: ((socket: WebSocket) => void)[] = [];
  server.on('upgrade', (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (ws) => {
      const waiter = waiters.shift();
      if (waiter === undefined) queue.push(ws);
      else waiter(ws);
    });
  });
  const port = await listenOnLoopback(server, 'acceptor');
  return {
    url: `ws://127.0.0.1:${port}/`,
    nextAccepted: () => {
      const queued = queue.shift();
      return queued === undefined ? new Promise((resolve) => waiters.push(resolve)) : Promise.resolve(queued);
    },
    close: async () => {
      for (const client of wss.clients) client.terminate();
      for (const socket of queue) socket.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
