import type { Observable, Subscription } from 'rxjs';
import type { ClosedError, ExecClientError } from '../errors';
import type { ConnectionFlow } from '../rpc/connection-flow';
import type { CallOptions, RpcConnection } from '../rpc/rpc-connection';
import type { MethodName, ParamsOf, ResultOf } from '../wire/methods';
import type { ProcessSink } from './process-sink';

/**
 * The logical client's state across sockets (codex `Connected` / `Recovering` / `Failed`, plus our
 * `closed`). `recovering` is entered again with each new error while recovering; `failed` and `closed`
 * are terminal, and both carry the error waiting calls and processes fail with.
 */
export type ClientState =
  | { readonly type: 'connecting' }
  | { readonly type: 'connected'; readonly rpc: RpcConnection; readonly sessionId: string }
  | { readonly type: 'recovering'; readonly error: ExecClientError }
  | { readonly type: 'failed'; readonly error: ExecClientError }
  | { readonly type: 'closed'; readonly error: ClosedError };

/** A terminal state: `failed` (the executor or the session is gone) or `closed` (we closed it). */
export type TerminalClientState = Extract<ClientState, { readonly type: 'failed' | 'closed' }>;

/** Whether `state` is terminal: nothing more happens on the client, every call fails with `state.error`. */
export const isTerminal = (state: ClientState): state is TerminalClientState => state.type === 'failed' || state.type === 'closed';

/**
 * What the layers above the session (`exec/`, `fs/`, `http/`, `environment/`) need of it: calls that
 * wait for recovery, the live connection, the state, and the registry of live processes that recovery
 * reads. {@link ExecClient} implements it; specs can script it without sockets.
 */
export interface ExecSession {
  /** The current state. */
  readonly state: ClientState;
  /** The current state, replayed to each subscriber; completes after `failed`. */
  readonly state$: Observable<ClientState>;
  /**
   * Calls `method` on the current connection, waiting for recovery first; methods the table marks safe
   * to send again are sent again after a lost connection. Emits the result once.
   */
  call<M extends MethodName>(method: M, params: ParamsOf<M>, options?: CallOptions): Observable<ResultOf<M>>;
  /** Emits the connected RpcConnection once (waiting while recovering), or errors with the failure. */
  connection(failFast?: boolean): Observable<RpcConnection>;
  /** The connected RpcConnection when there is one still open (the fast path of every call). */
  liveRpc(): RpcConnection | undefined;
  /** Registers a started process: it is read on every recovery and bound to every later connection. */
  addProcess(process: ProcessSink, route?: Subscription | { unsubscribe(): void }): void;
  /** Forgets a process (closed, failed or released). */
  removeProcess(processId: string): void;
  /** Flow control of the session's connection, across sockets: a hold pauses whichever socket is current. */
  readonly flow: ConnectionFlow;
}
