/**
 * A WebSocket-level man in the middle for fault specs: the executor dials the relay (through the
 * disconnectable proxy), the relay dials the host's acceptor and forwards every frame both ways as a
 * real WebSocket frame. Toward the host it can inject extra frames and rewrite the executor's frames.
 * When either side of a pair closes, the relay kills the other, so a drop at the proxy reaches the host.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BehaviorSubject, firstValueFrom, Subject } from 'rxjs';
import { filter, startWith } from 'rxjs/operators';
import type { RawData } from 'ws';
import WebSocket, { WebSocketServer } from 'ws';

/** One frame the relay forwards: a text frame as a string, a binary frame as bytes. */
export interface RelayFrame {
  readonly data: string | Buffer;
  readonly binary: boolean;
}

/** Rewrites one executor→host frame into the frames the host gets instead (`[frame]` passes it on). */
export type Tamper = (frame: RelayFrame) => readonly RelayFrame[];

/** A running relay. */
export interface FrameRelay {
  /** `ws://127.0.0.1:PORT/`: where the executor dials (put the proxy in front of it). */
  readonly url: string;
  /** Executor connections relayed so far. */
  readonly connectionCount: number;
  /** Sends a frame to the host on the live connection; resolves once written to the socket. */
  injectToHost(data: string | Buffer, binary?: boolean): Promise<void>;
  /** Rewrites the executor's frames from now on (`undefined`: forward them unchanged). */
  setTamper(tamper: Tamper | undefined): void;
  /** The method of a request the host sent with this id on the live connection. */
  methodOf(id: unknown): string | undefined;
  /** How many requests of `method` the host sent through the relay so far (all connections). */
  requestCount(method: string): number;
  /** Resolves once the host has sent `count` requests of `method` through the relay. */
  whenRequested(method: string, count: number): Promise<void>;
  /**
   * Host→executor messages for which `capture` returns true are kept in {@link FrameRelay.captured} and
   * not forwarded (e.g. the host's answers to server requests the relay injected, which the executor
   * would take as unexpected responses and drop the connection for).
   */
  captureFromHost(capture: ((message: Readonly<Record<string, unknown>>) => boolean) | undefined): void;
  /** Resolves with what {@link FrameRelay.captureFromHost} kept, in arrival order, once there are `count`. */
  whenCaptured(count: number): Promise<readonly Readonly<Record<string, unknown>>[]>;
  close(): Promise<void>;
}

const MAX_PAYLOAD = 256 * 1024 * 1024;

interface Pair {
  readonly executor: WebSocket;
  readonly host: WebSocket;
  /** Executor frames that arrived before the host socket opened. */
  readonly early: RelayFrame[];
  readonly methods: Map<string, string>;
}

const toBuffer = (data: RawData): Buffer => (Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data));

const idKey = (id: unknown): string => JSON.stringify(id) ?? 'undefined';

/** Starts a relay in front of the acceptor at `hostUrl`. */
export async function startFrameRelay(hostUrl: string): Promise<FrameRelay> {
  const server = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD, perMessageDeflate: false });
  const sockets = new Set<WebSocket>();
  let live: Pair | undefined;
  let tamper: Tamper | undefined;
  let connectionCount = 0;
  const requestCounts = new Map<string, number>();
  const requestsSeen = new Subject<void>();
  const captured: Record<string, unknown>[] = [];
  const capturedCount = new BehaviorSubject(0);
  let capture: ((message: Readonly<Record<string, unknown>>) => boolean) | undefined;

  const track = (socket: WebSocket): void => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  };

  const toHost = (pair: Pair, frame: RelayFrame): void => {
    if (pair.host.readyState === WebSocket.CONNECTING) pair.early.push(frame);
    else if (pair.host.readyState === WebSocket.OPEN) pair.host.send(frame.data, { binary: frame.binary });
  };

  const relay = (executor: WebSocket): void => {
    track(executor);
    const host = new WebSocket(hostUrl, { perMessageDeflate: false, maxPayload: MAX_PAYLOAD });
    track(host);
    const pair: Pair = { executor, host, early: [], methods: new Map() };
    live = pair;
    connectionCount += 1;
    const teardown = (): void => {
      if (live === pair) live = undefined;
      executor.terminate();
      host.terminate();
    };
    executor.once('close', teardown);
    host.once('close', teardown);
    host.once('open', () => {
      for (const frame of pair.early.splice(0)) host.send(frame.data, { binary: frame.binary });
    });
    executor.on('message', (data: RawData, isBinary: boolean) => {
      const bytes = toBuffer(data);
      const frame: RelayFrame = isBinary ? { data: bytes, binary: true } : { data: bytes.toString('utf8'), binary: false };
      for (const out of tamper === undefined ? [frame] : tamper(frame)) toHost(pair, out);
    });
    host.on('message', (data: RawData, isBinary: boolean) => {
      const bytes = toBuffer(data);
      if (!isBinary) {
        const parsed: unknown = JSON.parse(bytes.toString('utf8'));
        const message: Record<string, unknown> = typeof parsed === 'object' && parsed !== null ? { ...parsed } : {};
        const method = message['method'];
        if ('id' in message && typeof method === 'string') {
          pair.methods.set(idKey(message['id']), method);
          requestCounts.set(method, (requestCounts.get(method) ?? 0) + 1);
          requestsSeen.next();
        }
        if (capture?.(message) === true) {
          captured.push(message);
          capturedCount.next(captured.length);
          return;
        }
      }
      if (executor.readyState === WebSocket.OPEN) executor.send(bytes, { binary: isBinary });
    });
  };

  server.on('upgrade', (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, relay);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    url: `ws://127.0.0.1:${port}/`,
    get connectionCount() {
      return connectionCount;
    },
    injectToHost: (data, binary = false) =>
      new Promise<void>((resolve, reject) => {
        const host = live?.host;
        if (host === undefined || host.readyState !== WebSocket.OPEN) {
          reject(new Error('relay: no open connection to the host'));
          return;
        }
        host.send(data, { binary }, (error) => (error === undefined || error === null ? resolve() : reject(error)));
      }),
    setTamper: (next) => {
      tamper = next;
    },
    methodOf: (id) => live?.methods.get(idKey(id)),
    requestCount: (method) => requestCounts.get(method) ?? 0,
    whenRequested: async (method, count) => {
      await firstValueFrom(requestsSeen.pipe(startWith(undefined), filter(() => (requestCounts.get(method) ?? 0) >= count)));
    },
    captureFromHost: (next) => {
      capture = next;
    },
    whenCaptured: async (count) => {
      await firstValueFrom(capturedCount.pipe(filter((n) => n >= count)));
      return [...captured];
    },
    close: () => {
      closing ??= (async () => {
        capturedCount.complete();
        requestsSeen.complete();
        const closed = [...sockets].map((socket) => new Promise<void>((resolve) => {
          if (socket.readyState === WebSocket.CLOSED) resolve();
          else socket.once('close', () => resolve());
          socket.terminate();
        }));
        await Promise.all(closed);
        wss.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closing;
    },
  };
}
