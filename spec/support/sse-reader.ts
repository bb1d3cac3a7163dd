/**
 * A raw SSE client for the operator API's event streams, on node:http (no EventSource library): one
 * request per connection (`agent: false`), the body parsed incrementally by {@link SseParser}, and a
 * resuming reader that reconnects with `Last-Event-ID: <last id received>` until the stream's last event
 * (`closed` or `failed`) arrived, recording every connection.
 */
import { request } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { SseParser } from './sse-parser';

/** One event as received. `id` is the frame's `id:` as a number (undefined when it had none). */
export interface SseEvent {
  readonly id: number | undefined;
  readonly event: string;
  readonly data: string;
}

/** How a connection's body ended: `end` the server finished it (terminating chunk), `cut` it broke off first. */
export type SseEndReason = 'end' | 'cut';

/** Options of {@link openSse}. */
export interface SseConnectionOptions {
  /** The full url (an `?after=` included when wanted). */
  readonly url: string;
  /** The operator token (sent as a bearer token; never logged). */
  readonly token: string;
  /** Sent as `Last-Event-ID` when given. */
  readonly lastEventId?: number | string;
  /** Called for each event as it arrives. */
  readonly onEvent?: (event: SseEvent) => void;
  /** Called for each comment line (` ping`). */
  readonly onComment?: (text: string) => void;
  /** How long the response head may take. @default 10000 */
  readonly headTimeoutMs?: number;
}

/** One open response. */
export interface SseConnection {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Events received on this connection, in order. */
  readonly events: readonly SseEvent[];
  readonly comments: readonly string[];
  /** Body bytes received (after transfer decoding). */
  readonly bodyBytes: number;
  /** The body of a non-SSE answer (a problem), once ended. */
  readonly text: string;
  /** Bytes after the last frame boundary: 0 when the body so far ends between frames. */
  readonly partialBytes: number;
  /** Settles once the body ended and the socket closed. */
  readonly ended: Promise<SseEndReason>;
  /** Stops reading (the socket is no longer read: TCP flow control pushes back to the server). */
  pause(): void;
  /** Reads again. */
  resume(): void;
  /** Destroys the connection; resolves once its socket closed. */
  close(): Promise<SseEndReason>;
}

const toId = (id: string | undefined): number | undefined => (id === undefined || !/^\d+$/.test(id) ? undefined : Number(id));

/** Opens one event stream request; resolves at the response head, rejects when the connection fails first. */
export function openSse(options: SseConnectionOptions): Promise<SseConnection> {
  // Offers compression, as browsers do: the host must not use it on an event stream.
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'text/event-stream', 'accept-encoding': 'gzip, deflate, br' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  return new Promise<SseConnection>((resolve, reject) => {
    const req = request(options.url, { agent: false, headers });
    const timer = setTimeout(() => req.destroy(new Error(`no response head after ${options.headTimeoutMs ?? 10_000} ms`)), options.headTimeoutMs ?? 10_000);
    let socketClosed: Promise<void> = Promise.resolve();
    req.on('socket', (socket) => {
      socketClosed = new Promise<void>((done) => socket.once('close', () => done()));
    });
    req.once('error', (error) => {
      clearTimeout(timer);
      void socketClosed.then(() => reject(error));
    });
    req.once('response', (res: IncomingMessage) => {
      clearTimeout(timer);
      req.on('error', () => undefined);
      resolve(connectionOf(res, options, socketClosed));
    });
    req.end();
  });
}

function connectionOf(res: IncomingMessage, options: SseConnectionOptions, socketClosed: Promise<void>): SseConnection {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const texts: Buffer[] = [];
  const sse = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
  const parser = new SseParser({
    frame: (frame) => {
      const event = { id: toId(frame.id), event: frame.event, data: frame.data };
      events.push(event);
      options.onEvent?.(event);
    },
    comment: (text) => {
      comments.push(text);
      options.onComment?.(text);
    },
  });
  let bodyBytes = 0;
  let complete = false;
  res.on('data', (chunk: Buffer) => {
    bodyBytes += chunk.byteLength;
    if (sse) parser.push(chunk);
    else texts.push(chunk);
  });
  res.on('end', () => (complete = true));
  res.on('error', () => undefined);
  const ended = new Promise<SseEndReason>((resolve) => res.once('close', () => void socketClosed.then(() => resolve(complete ? 'end' : 'cut'))));
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    events,
    comments,
    get bodyBytes() {
      return bodyBytes;
    },
    get text() {
      return Buffer.concat(texts).toString('utf8');
    },
    get partialBytes() {
      return parser.partialBytes;
    },
    ended,
    pause: () => void res.pause(),
    resume: () => void res.resume(),
    close: () => {
      res.destroy();
      return ended;
    },
  };
}

/** One connection of a {@link readToEnd}. */
export interface ConnectionRecord {
  /** The `Last-Event-ID` it sent (undefined on a first request without one). */
  readonly lastEventId: number | undefined;
  readonly status: number;
  /** Events received on it. */
  readonly events: number;
  /** `end`, `cut`, or `failed` (the connection broke before its head). */
  readonly end: SseEndReason | 'failed';
  /** Bytes after the last whole frame when it ended. */
  readonly partialBytes: number;
}

/** Everything a {@link readToEnd} received. */
export interface SseTranscript {
  /** Every event, in order, over all connections. */
  readonly events: readonly SseEvent[];
  readonly connections: readonly ConnectionRecord[];
  /** Headers of the first answered connection. */
  readonly headers: IncomingHttpHeaders;
}

/** Options of {@link readToEnd}. */
export interface ReadToEndOptions {
  /** The events url without a query. */
  readonly url: string;
  readonly token: string;
  /** Resume after this seq on the first request. */
  readonly after?: number;
  /** How the first request names `after`: `?after=` or `Last-Event-ID`. @default 'header' */
  readonly afterVia?: 'query' | 'header';
  /** Called for each event (with all so far). */
  readonly onEvent?: (event: SseEvent, all: readonly SseEvent[]) => void;
  /** Called with each open connection (to pause it, say). */
  readonly onConnection?: (connection: SseConnection, index: number) => void;
  /** At most this many connections. @default 100 */
  readonly maxConnections?: number;
}

const isLast = (event: SseEvent | undefined): boolean => event?.event === 'closed' || event?.event === 'failed';

/**
 * Reads a process's event stream to its last event (`closed` or `failed`), reconnecting with
 * `Last-Event-ID: <last id received>` whenever a connection ends or breaks first. Rejects on an answer
 * other than 200 or after `maxConnections`.
 */
export async function readToEnd(options: ReadToEndOptions): Promise<SseTranscript> {
  const events: SseEvent[] = [];
  const connections: ConnectionRecord[] = [];
  let headers: IncomingHttpHeaders | undefined;
  let lastId = options.after;
  const max = options.maxConnections ?? 100;
  while (!isLast(events.at(-1))) {
    if (connections.length >= max) throw new Error(`no end after ${max} connections (${events.length} events, last id ${String(lastId)})`);
    const first = connections.length === 0;
    const viaQuery = first && options.after !== undefined && options.afterVia === 'query';
    const url = viaQuery ? `${options.url}?after=${String(options.after)}` : options.url;
    const sent = viaQuery ? undefined : lastId;
    let connection: SseConnection;
    try {
      connection = await openSse({
        url,
        token: options.token,
        ...(sent === undefined ? {} : { lastEventId: sent }),
        onEvent: (event) => {
          events.push(event);
          if (event.id !== undefined) lastId = event.id;
          options.onEvent?.(event, events);
        },
      });
    } catch {
      connections.push({ lastEventId: sent, status: 0, events: 0, end: 'failed', partialBytes: 0 });
      continue;
    }
    headers ??= connection.headers;
    options.onConnection?.(connection, connections.length);
    const end = await connection.ended;
    if (connection.status !== 200) throw new Error(`events answered ${connection.status}: ${connection.text}`);
    connections.push({ lastEventId: sent, status: connection.status, events: connection.events.length, end, partialBytes: connection.partialBytes });
  }
  return { events, connections, headers: headers ?? {} };
}
