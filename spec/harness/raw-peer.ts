/**
 * A minimal JSON-RPC client speaking raw JSON to the real executor, for the harness specs (the library's
 * own client is tested elsewhere). Works over a `ws` socket (one message per frame) or a stdio pipe
 * (one message per line).
 */
import type { Readable, Writable } from 'node:stream';
import WebSocket from 'ws';

/** A decoded inbound message (response, error or notification). */
export type RawMessage = Readonly<Record<string, unknown>>;

/** The `params` of a notification, or `{}`. */
export function paramsOf(message: RawMessage): Record<string, unknown> {
  const { params } = message;
  return typeof params === 'object' && params !== null ? { ...params } : {};
}

interface Waiter {
  readonly match: (message: RawMessage) => boolean;
  readonly resolve: (message: RawMessage) => void;
}

/** Correlates requests by id and records notifications. Call `dispose()` to fail nothing and clear timers. */
export class RawPeer {
  /** Every notification received, in order. */
  readonly notifications: RawMessage[] = [];
  private nextId = 1;
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly send: (text: string) => void) {}

  /** Feeds one inbound JSON text. */
  readonly receive = (text: string): void => {
    const message: unknown = JSON.parse(text);
    if (typeof message !== 'object' || message === null) throw new Error(`not an object: ${text}`);
    const record: RawMessage = { ...message };
    if (!('id' in record)) this.notifications.push(record);
    for (const waiter of [...this.waiters]) {
      if (waiter.match(record)) {
        this.waiters.delete(waiter);
        waiter.resolve(record);
      }
    }
  };

  /** Sends a request; resolves with its response or error message. */
  request(method: string, params?: unknown): Promise<RawMessage> {
    const id = this.nextId++;
    const reply = this.waitFor((m) => m['id'] === id && ('result' in m || 'error' in m), `reply to ${method}`);
    this.send(JSON.stringify(params === undefined ? { id, method } : { id, method, params }));
    return reply;
  }

  /** Sends a request and returns its `result`, failing on an error reply. */
  async call(method: string, params?: unknown): Promise<unknown> {
    const reply = await this.request(method, params);
    if ('error' in reply) throw new Error(`${method} failed: ${JSON.stringify(reply['error'])}`);
    return reply['result'];
  }

  /** Sends a notification. */
  notify(method: string, params: unknown): void {
    this.send(JSON.stringify({ method, params }));
  }

  /** Resolves with the first notification (already received or future) with `method` matching `predicate`. */
  notification(method: string, predicate: (params: Record<string, unknown>) => boolean = () => true): Promise<RawMessage> {
    const match = (m: RawMessage): boolean => m['method'] === method && !('id' in m) && predicate(paramsOf(m));
    const seen = this.notifications.find(match);
    return seen === undefined ? this.waitFor(match, `notification ${method}`) : Promise.resolve(seen);
  }

  private waitFor(match: (message: RawMessage) => boolean, what: string, timeoutMs = 10_000): Promise<RawMessage> {
    return new Promise<RawMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const waiter: Waiter = {
        match,
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
      };
      this.waiters.add(waiter);
    });
  }
}

/** Sends `initialize` (optionally resuming) then `initialized`; returns the `sessionId`. */
export async function initialize(peer: RawPeer, resumeSessionId?: string): Promise<string> {
  const params = resumeSessionId === undefined ? { clientName: 'spec' } : { clientName: 'spec', resumeSessionId };
  const result = await peer.call('initialize', params);
  const sessionId = typeof result === 'object' && result !== null && 'sessionId' in result ? result.sessionId : undefined;
  if (typeof sessionId !== 'string') throw new Error(`initialize returned no sessionId: ${JSON.stringify(result)}`);
  peer.notify('initialized', {});
  return sessionId;
}

/** A `ws` socket wrapped as a RawPeer, with a promise for its close. */
export interface WsPeer {
  readonly socket: WebSocket;
  readonly peer: RawPeer;
  /** Resolves with the close code when the socket has closed (1006 for every executor-side drop). */
  readonly closed: Promise<number>;
  /** Terminates the socket and waits for its close. */
  close(): Promise<void>;
}

/** Wraps an open socket (dialled or accepted). */
export function wrapSocket(socket: WebSocket): WsPeer {
  const peer = new RawPeer((text) => socket.send(text));
  socket.on('message', (data: WebSocket.RawData) => peer.receive(String(data)));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => {
    if (socket.readyState === WebSocket.CLOSED) resolve(1006);
    else socket.once('close', (code: number) => resolve(code));
  });
  return {
    socket,
    peer,
    closed,
    close: async () => {
      socket.terminate();
      await closed;
    },
  };
}

/** The outcome of dialling: an open socket, or the HTTP status and body that refused the upgrade. */
export type DialOutcome = { readonly kind: 'open'; readonly ws: WsPeer } | { readonly kind: 'refused'; readonly status: number; readonly body: string };

/** Dials `url` with optional upgrade headers. */
export function dial(url: string, headers: Record<string, string> = {}): Promise<DialOutcome> {
  return new Promise<DialOutcome>((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => resolve({ kind: 'open', ws: wrapSocket(socket) }));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        socket.terminate();
        resolve({ kind: 'refused', status: response.statusCode ?? 0, body });
      });
    });
    socket.on('error', reject);
  });
}

/** Dials `url` and fails unless the upgrade succeeds. */
export async function dialOpen(url: string, headers: Record<string, string> = {}): Promise<WsPeer> {
  const outcome = await dial(url, headers);
  if (outcome.kind === 'refused') throw new Error(`upgrade refused: ${outcome.status} ${outcome.body}`);
  return outcome.ws;
}

/** A stdio executor's pipes wrapped as a RawPeer (newline-delimited JSON). */
export function stdioPeer(stdin: Writable, stdout: Readable): RawPeer {
  const peer = new RawPeer((text) => stdin.write(`${text}\n`));
  let partial = '';
  stdout.setEncoding('utf8');
  stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') peer.receive(line);
  });
  return peer;
}
