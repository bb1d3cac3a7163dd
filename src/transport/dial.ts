import type { IncomingMessage } from 'node:http';
import { defer, from, Observable, throwError } from 'rxjs';
import { mergeMap } from 'rxjs/operators';
import WebSocket from 'ws';
import { AuthenticationError, ConnectError, DialHeadersError } from '../errors';
import type { SocketPort } from './socket-port';
import { wsSocketPort } from './ws-socket-port';

/** The default connect timeout (codex uses 10 s). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** The default largest inbound message we accept: well above the executor's 16 MiB. */
export const DEFAULT_MAX_INBOUND_MESSAGE_BYTES = 256 * 1024 * 1024;

/** Upgrade headers of a dial, by name. */
export type DialHeaders = Readonly<Record<string, string>>;

/**
 * The headers of each dial: a value, or a function called on every dial attempt (re-dials after a drop
 * included) that returns them or a promise of them, for credentials that expire and are refreshed (as
 * graphql-ws's `connectionParams` and socket.io's `auth` take them).
 */
export type DialHeadersSource = DialHeaders | (() => DialHeaders | PromiseLike<DialHeaders>);

/** Options of {@link dial}. */
export interface DialOptions {
  /**
   * Extra upgrade headers, e.g. `{ Authorization: 'Bearer <token>' }` for `--ws-auth capability-token`;
   * or a function (sync or async) giving them, evaluated afresh on every dial attempt, so a re-dial
   * after a drop uses a refreshed token. A function that throws or rejects fails that attempt with
   * {@link DialHeadersError} (`cause`: what it threw), no socket opened. Header values are never logged
   * nor put in an error message.
   * @default none
   */
  readonly headers?: DialHeadersSource;
  /** How long the TCP connect plus upgrade may take. @default 10000 */
  readonly connectTimeoutMs?: number;
  /** The largest inbound message accepted. @default 268435456 (256 MiB) */
  readonly maxInboundMessageBytes?: number;
  /** Send a pong after each batch of received frames (see {@link WsSocketPortOptions.ackPong}). @default true */
  readonly ackPong?: boolean;
}

/** A url as it may appear in messages: no query string (it may carry a token), no credentials. */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '<invalid url>';
  }
};

/**
 * Dials a listening executor. Cold: each subscription evaluates `options.headers` (when a function)
 * and opens one socket. Emits the open {@link SocketPort} once and completes; errors with
 * {@link DialHeadersError} when the headers function throws or rejects (no socket opened),
 * {@link AuthenticationError} on HTTP 401, {@link ConnectError} on any other failure or on the connect
 * timeout (measured from the socket's creation, after the headers are known). Unsubscribing before the
 * socket opens aborts the dial (a headers promise still pending is then ignored); once emitted, the
 * port belongs to the subscriber, who closes it.
 */
export const dial = (url: string, options: DialOptions = {}): Observable<SocketPort> =>
  defer(() => {
    const source = options.headers;
    if (typeof source !== 'function') return open(url, options, source);
    const label = redactUrl(url);
    let headers: DialHeaders | PromiseLike<DialHeaders>;
    try {
      headers = source();
    } catch (error: unknown) {
      return throwError(() => new DialHeadersError(label, error));
    }
    return from(Promise.resolve(headers).catch((error: unknown) => Promise.reject(new DialHeadersError(label, error)))).pipe(mergeMap((resolved) => open(url, options, resolved)));
  });

/** One socket with these headers (see {@link dial}). */
const open = (url: string, options: DialOptions, headers: DialHeaders | undefined): Observable<SocketPort> =>
  new Observable<SocketPort>((subscriber) => {
    const label = redactUrl(url);
    const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const socket = new WebSocket(url, {
      headers: { ...headers },
      maxPayload: options.maxInboundMessageBytes ?? DEFAULT_MAX_INBOUND_MESSAGE_BYTES,
      handshakeTimeout: timeoutMs,
      perMessageDeflate: false,
    });
    let settled = false;
    const fail = (error: ConnectError): void => {
      if (settled) return;
      settled = true;
      socket.terminate();
      subscriber.error(error);
    };
    socket.once('open', () => {
      settled = true;
      socket.off('unexpected-response', onUnexpected);
      subscriber.next(wsSocketPort(socket, { label, ackPong: options.ackPong ?? true }));
      subscriber.complete();
    });
    const onUnexpected = (_request: unknown, response: IncomingMessage): void => {
      const status = response.statusCode ?? 0;
      const detail = `HTTP ${status}${response.statusMessage === undefined ? '' : ` ${response.statusMessage}`}`;
      response.resume();
      fail(status === 401 ? new AuthenticationError(label, detail, status) : new ConnectError(label, detail, status));
    };
    socket.on('unexpected-response', onUnexpected);
    socket.on('error', (cause: Error) => fail(new ConnectError(label, cause.message, undefined, { cause })));
    return () => {
      if (!settled) {
        settled = true;
        socket.terminate();
      }
    };
  });
