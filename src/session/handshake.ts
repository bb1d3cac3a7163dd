import type { SchedulerLike } from 'rxjs';
import { asyncScheduler, defer, throwError } from 'rxjs';
import { map, timeout } from 'rxjs/operators';
import type { Observable } from 'rxjs';
import { ProtocolError, RequestTimeoutError } from '../errors';
import type { RpcConnection } from '../rpc/rpc-connection';
import type { EnvironmentInfo } from '../wire/environment';

/** codex's initialize timeout: the request, its reply and sending `initialized`. */
export const DEFAULT_INITIALIZE_TIMEOUT_MS = 10_000;

/** A session the executor created or resumed on a connection. */
export interface Session {
  readonly sessionId: string;
  /** The environment info the initialize reply carried; older executors omit it. */
  readonly environmentInfo: EnvironmentInfo | undefined;
}

/** Options of {@link handshake}. */
export interface HandshakeOptions {
  readonly clientName: string;
  /** The session to resume; absent for a new session. */
  readonly resumeSessionId?: string | undefined;
  /** @default 10000 */
  readonly timeoutMs?: number;
  readonly scheduler?: SchedulerLike;
}

/**
 * Runs the handshake on an open connection: `initialize {clientName, resumeSessionId?}`, then the
 * `initialized` notification. Cold; emits the Session once and completes. Errors with RpcError (e.g.
 * -32010 session attached elsewhere, -32600 unknown session id), RequestTimeoutError (`initialize`),
 * ProtocolError when a resume returns another session id, or TransportClosedError.
 * It does not close the connection on failure: the caller owns it.
 */
export function handshake(rpc: RpcConnection, options: HandshakeOptions): Observable<Session> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_INITIALIZE_TIMEOUT_MS;
  const resumeSessionId = options.resumeSessionId;
  const params = resumeSessionId === undefined ? { clientName: options.clientName } : { clientName: options.clientName, resumeSessionId };
  return defer(() => rpc.request('initialize', params, { timeoutMs })).pipe(
    map((result) => {
      if (resumeSessionId !== undefined && result.sessionId !== resumeSessionId) {
        throw new ProtocolError(`exec-server initialized an unexpected session ${result.sessionId} (expected ${resumeSessionId})`);
      }
      rpc.sendInitialized();
      return { sessionId: result.sessionId, environmentInfo: result.environmentInfo };
    }),
    timeout({
      first: timeoutMs,
      scheduler: options.scheduler ?? asyncScheduler,
      with: () => throwError(() => new RequestTimeoutError('initialize', timeoutMs)),
    }),
  );
}
