/**
 * The session as an Environment's rooms (processes, filesystem, HTTP) use it. A call made once the
 * environment has failed rejects with {@link EnvironmentFailedError} naming the environment, its `cause`
 * the failure (docs/library.md, Errors); a call already waiting for recovery when recovery fails rejects with the
 * failure itself (docs/library.md, Reconnect and resume semantics). Everything else is the session's own.
 */
import type { Observable, Subscription } from 'rxjs';
import { defer, throwError } from 'rxjs';
import type { ExecClientError } from '../errors';
import { EnvironmentFailedError } from '../errors';
import type { ConnectionFlow } from '../rpc/connection-flow';
import type { CallOptions, RpcConnection } from '../rpc/rpc-connection';
import type { ClientState, ExecSession } from '../session/exec-session';
import type { ProcessSink } from '../session/process-sink';
import type { MethodName, ParamsOf, ResultOf } from '../wire/methods';

/** The error of a call on environment `environmentId`, failed with `failure`. */
const environmentFailed = (environmentId: string, failure: ExecClientError): EnvironmentFailedError =>
  new EnvironmentFailedError(environmentId, `environment ${environmentId} failed: ${failure.message}`, { cause: failure });

/** An {@link ExecSession} whose calls on a failed environment reject with {@link EnvironmentFailedError}. */
export class EnvironmentSession implements ExecSession {
  constructor(
    private readonly environmentId: string,
    private readonly session: ExecSession,
  ) {}

  /** The session's state. */
  get state(): ClientState {
    return this.session.state;
  }

  /** The session's state stream. */
  get state$(): Observable<ClientState> {
    return this.session.state$;
  }

  /** The session's call; EnvironmentFailedError when subscribed to once the environment failed. */
  call<M extends MethodName>(method: M, params: ParamsOf<M>, options?: CallOptions): Observable<ResultOf<M>> {
    return this.unlessFailed(() => this.session.call(method, params, options));
  }

  /** The session's connection; EnvironmentFailedError when subscribed to once the environment failed. */
  connection(failFast?: boolean): Observable<RpcConnection> {
    return this.unlessFailed(() => this.session.connection(failFast));
  }

  /** The session's live connection (none once failed). */
  liveRpc(): RpcConnection | undefined {
    return this.session.liveRpc();
  }

  /** Registers a process with the session. */
  addProcess(process: ProcessSink, route?: Subscription | { unsubscribe(): void }): void {
    this.session.addProcess(process, route);
  }

  /** Forgets a process. */
  removeProcess(processId: string): void {
    this.session.removeProcess(processId);
  }

  /** The session's flow control. */
  get flow(): ConnectionFlow {
    return this.session.flow;
  }

  /** `next()`, or EnvironmentFailedError when the environment has failed by the time it is subscribed to. */
  private unlessFailed<T>(next: () => Observable<T>): Observable<T> {
    return defer(() => {
      const state = this.session.state;
      return state.type === 'failed' ? throwError(() => environmentFailed(this.environmentId, state.error)) : next();
    });
  }
}
