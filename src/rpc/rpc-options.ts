import type { SchedulerLike } from 'rxjs';
import type { ConnectionFlow } from './connection-flow';
import type { KeepaliveOptions } from './keepalive';
import type { ServerRequestHandler } from './server-requests';

/** The default per-call timeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export type { KeepaliveOptions } from './keepalive';

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
}

/** Per-call options. */
export interface CallOptions {
  /** Overrides the connection's default timeout for this call. */
  readonly timeoutMs?: number;
  /** Aborting fails the call with AbortedError (the reply, if it comes, is reported as unknown). */
  readonly signal?: AbortSignal;
}
