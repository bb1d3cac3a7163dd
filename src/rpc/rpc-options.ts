import type { SchedulerLike } from 'rxjs';
import type { ConnectionFlow } from './connection-flow';
import type { KeepaliveOptions } from './keepalive';
import type { ServerRequestHandler } from './server-requests';

/** The default per-call timeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export type { KeepaliveOptions } from './keepalive';

/**
 * Hears each call as it settles: its method, `ok` or the library error code it failed with
 * (`REQUEST_TIMEOUT`, `TRANSPORT_CLOSED` ...), and the ms from sending to settling on the connection's
 * scheduler. Called on the connection's turn: it must be quick and must not throw. A call dropped by its
 * caller (unsubscribed) is not heard.
 */
export type CallObserver = (method: string, outcome: string, durationMs: number) => void;

/** Options of `RpcConnection`. */
export interface RpcConnectionOptions {
  /** Drives timeouts and keepalive; tests pass a TestScheduler. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** Default per-call timeout. @default 30000 */
  readonly requestTimeoutMs?: number;
  /** WebSocket keepalive; `false` or absent disables it. @default undefined (off) */
  readonly keepalive?: KeepaliveOptions | false;
  /** Answers server-to-client requests; a method it returns `undefined` for gets -32601. */
  readonly serverRequests?: ServerRequestHandler;
  /** The largest frame we send; bigger calls fail with FrameTooLargeError. @default 16777216 */
  readonly maxOutboundFrameBytes?: number;
  /**
   * A flow shared across sockets (a session's): its holds outlive this connection, and whoever passes
   * it attaches the connection (`flow.attach(rpc.reader)`) once it may be paused. @default a flow of its own,
   * attached by `open()`
   */
  readonly flow?: ConnectionFlow;
  /** Hears every call's outcome and latency (a host's metrics). @default none */
  readonly onCall?: CallObserver;
}

/** Per-call options. */
export interface CallOptions {
  /** Overrides the connection's default timeout for this call. */
  readonly timeoutMs?: number;
  /**
   * Cancels the call: an abort rejects it with `signal.reason` itself (a DOMException named `AbortError`
   * after `controller.abort()`, `x` after `controller.abort(x)`); an already-aborted signal rejects at
   * once and nothing is sent. An abort does not undo a request already sent: the executor still acts on
   * it (a `process/start` may start its process, a write stays written), and its reply, if one comes, is
   * reported to diagnostics as `unknownResponse`.
   */
  readonly signal?: AbortSignal;
}
