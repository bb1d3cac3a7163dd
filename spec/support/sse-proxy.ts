/**
 * A disconnectable HTTP proxy at the TCP level, for SSE fault specs: it forwards each connection to the
 * host byte for byte, reads the request head it forwarded (the resume point: `Last-Event-ID` or
 * `?after=`), and watches the response (head, chunked body, SSE frames) for what it delivered whole.
 * It cuts connections at chosen offsets of the response bytes it forwards (the count runs over all
 * connections, so an offset may fall anywhere: inside a frame, a chunk header, a response head): the
 * client gets exactly the bytes up to the offset and then FIN; the host's side is destroyed.
 *
 * It takes one request per connection (as the SSE reader sends them, `agent: false`). Its log has one
 * entry per request: the resume point, the first and last ids it forwarded whole, and
 * every id at or below the resume point the host sent (there must be none); bytes a client sent after
 * its first request head are counted (a reused connection would hide a request from the log).
 *
 * It can also play a host that is down: `refuse('reset')` resets every connection, open or new (the
 * client sees ECONNRESET), `refuse('unlisten')` drops the open ones and stops listening (ECONNREFUSED);
 * `accept()` lets connections through again, on the same port.
 */
import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { listenOnLoopback } from './listen-on-loopback';
import type { ProxiedRequest } from './sse-proxy-watch';
import { HeadReader, ResponseWatcher, readRequestHead } from './sse-proxy-watch';

export type { ProxiedRequest } from './sse-proxy-watch';

/** A running proxy. */
export interface SseProxy {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string;
  readonly log: readonly ProxiedRequest[];
  /** Response bytes forwarded so far, over all connections. */
  readonly totalResponseBytes: number;
  /** Cuts made so far. */
  readonly cuts: number;
  /** Connections reset at once while refusing (`reset` mode). */
  readonly refused: number;
  /** Cuts whichever connection is forwarding when the total response bytes reach each offset (ascending). */
  cutAt(offsets: readonly number[]): void;
  /** Cuts every open connection now (the client gets what was forwarded, then FIN); returns how many. */
  cutAll(): number;
  /** Plays a host that is down until {@link accept}: every open connection goes, and new ones are reset or refused. */
  refuse(mode: 'reset' | 'unlisten'): Promise<void>;
  /** Lets connections through again (listening again on the same port after `unlisten`). */
  accept(): Promise<void>;
  /** Stops listening and destroys every socket. */
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 in front of `targetPort`. */
export async function startSseProxy(targetPort: number): Promise<SseProxy> {
  const sockets = new Set<Socket>();
  const log: ProxiedRequest[] = [];
  const cutsPending: number[] = [];
  const cutters = new Set<() => void>();
  let total = 0;
  let cuts = 0;
  let refused = 0;
  let refusing: 'reset' | 'unlisten' | undefined;

  const server = createServer((client) => {
    if (refusing !== undefined) {
      refused += 1;
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => sockets.delete(socket));
    }
    const entry: ProxiedRequest = { no: log.length + 1, path: '', lastEventId: undefined, after: undefined, status: 0, contentType: '', firstId: undefined, lastId: undefined, ids: 0, atOrBelowResume: [], notContiguous: [], responseBytes: 0, cutInsideFrame: false, complete: false, end: undefined, bytesAfterRequest: 0 };
    log.push(entry);
    const request = new HeadReader((head, rest) => {
      readRequestHead(head, entry);
      entry.bytesAfterRequest += rest.length;
    });
    const response = new ResponseWatcher(entry);
    let cutHere = false;
    const cut = (): void => {
      // The client keeps exactly what it got, then FIN; the host sees its client go away.
      cuts += 1;
      cutHere = true;
      entry.end = 'cut';
      entry.cutInsideFrame = response.insideFrame;
      client.end();
      upstream.destroy();
    };
    cutters.add(cut);
    client.once('close', () => cutters.delete(cut));
    client.on('data', (chunk: Buffer) => {
      if (request.finished) entry.bytesAfterRequest += chunk.length;
      else request.push(chunk);
      if (!upstream.destroyed && !upstream.write(chunk)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.on('data', (chunk: Buffer) => {
      if (cutHere) return;
      const cutAt = cutsPending[0];
      const take = cutAt !== undefined && total + chunk.length >= cutAt ? Math.max(0, cutAt - total) : chunk.length;
      const piece = chunk.subarray(0, take);
      total += take;
      entry.responseBytes += take;
      response.push(piece);
      const more = client.write(piece);
      if (cutAt !== undefined && total >= cutAt) {
        cutsPending.shift();
        cut();
        return;
      }
      if (!more) upstream.pause();
    });
    client.on('drain', () => upstream.resume());
    // What the host sent is flushed to the client before its FIN.
    upstream.once('close', () => {
      entry.end ??= 'host';
      client.end();
    });
    client.once('close', () => {
      entry.end ??= 'client';
      upstream.destroy();
    });
  });

  const port = await listenOnLoopback(server, 'sse proxy');
  let closing: Promise<void> | undefined;
  const listenAgain = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  return {
    origin: `http://127.0.0.1:${port}`,
    log,
    get totalResponseBytes() {
      return total;
    },
    get cuts() {
      return cuts;
    },
    get refused() {
      return refused;
    },
    cutAt: (offsets) => {
      cutsPending.push(...offsets);
      cutsPending.sort((a, b) => a - b);
    },
    cutAll: () => {
      const open = [...cutters];
      for (const cut of open) cut();
      return open.length;
    },
    refuse: async (mode) => {
      if (refusing !== undefined) throw new Error(`the proxy already refuses (${refusing})`);
      refusing = mode;
      if (mode === 'unlisten') server.close();
      await Promise.all([...sockets].map((socket) => gone(socket, () => (mode === 'reset' ? socket.resetAndDestroy() : socket.destroy()))));
    },
    accept: async () => {
      const was = refusing;
      refusing = undefined;
      if (was === 'unlisten' && closing === undefined) await listenAgain();
    },
    close: () => {
      closing ??= (async () => {
        const serverClosed = new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
        await Promise.all([...sockets].map((socket) => gone(socket, () => socket.destroy())));
        await serverClosed;
      })();
      return closing;
    },
  };
}


/** Ends `socket` with `end` and resolves once it closed. */
function gone(socket: Socket, end: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    if (socket.closed) return resolve();
    socket.once('close', () => resolve());
    end();
  });
}
