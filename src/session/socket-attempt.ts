/**
 * One socket's attempt at carrying an `ExecClient`'s session: its RpcConnection, the handshake (a
 * takeover's resume, and the plain `initialize` after it when the executor no longer has the session),
 * the recovery reads of every live process, and the flow attached once the session is resumed. What
 * happened is reported to the client as {@link AttachEvent}s.
 */
import type { Observable, SchedulerLike } from 'rxjs';
import { from, merge, of, throwError } from 'rxjs';
import { catchError, finalize, map, mergeMap, tap } from 'rxjs/operators';
import type { ExecClientError, TransportClosedError } from '../errors';
import { RpcError } from '../errors';
import type { ConnectionFlow } from '../rpc/connection-flow';
import { RpcConnection } from '../rpc/rpc-connection';
import type { SocketPort } from '../transport/socket-port';
import { asClientError, isRetryable } from './attempt-errors';
import type { ExecClientOptions, SessionTakeover } from './exec-client-options';
import { handshake } from './handshake';
import type { Session } from './handshake';
import type { ProcessSink } from './process-sink';
import { recoverProcesses } from './recover-processes';

/** What happened to one socket's attempt; socket sources react to it (redial, free the replacement slot). */
export type AttemptOutcome = 'attached' | 'retry' | 'lost' | 'fatal';

/** What one socket's attempt tells its client: the session is installed on it, the socket was lost, or the attempt failed. */
export type AttachEvent =
  | { readonly type: 'attached'; readonly rpc: RpcConnection; readonly session: Session }
  | { readonly type: 'lost'; readonly error: TransportClosedError }
  | { readonly type: 'failedAttempt'; readonly error: ExecClientError; readonly retryable: boolean };

/** What an attempt needs of its client, read when the attempt starts. */
export interface AttemptContext {
  /** The client's options (its name, the session to resume or take over, the connection's options). */
  readonly options: ExecClientOptions;
  /** The client's scheduler (the handshake's timeout). */
  readonly scheduler: SchedulerLike;
  /** The client's flow: it holds the connection paused once the session is resumed. */
  readonly flow: ConnectionFlow;
  /** The session installed last, resumed on this socket; `undefined` before the first one. */
  readonly sessionId: string | undefined;
  /** The client's live processes: bound to the socket and read on it; those that fail or are lost leave it. */
  readonly processes: Map<string, ProcessSink>;
}

const isUnknown = (error: unknown, what: 'session' | 'process'): error is RpcError =>
  error instanceof RpcError && error.rpcCode === -32600 && error.rpcMessage.startsWith(`unknown ${what} id`);

/**
 * Attaches `port`: opens its connection, shakes hands and reads every live process from its last
 * published seq, then emits `attached`, and `lost` when the socket closes; a failure emits
 * `failedAttempt` (never an error). Unsubscribing (the client moved on to the next socket) retires the
 * socket first: its flow, its process routes, and the connection.
 */
export function socketAttempt(port: SocketPort, client: AttemptContext): Observable<AttachEvent> {
  const { options, processes } = client;
  const rpc = new RpcConnection(port, { ...options.rpc, ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }), flow: client.flow });
  // Paused (while held) only once the session is resumed: the handshake and recovery reads need replies.
  let detachFlow = (): void => undefined;
  const takeover = client.sessionId === undefined ? options.takeover : undefined;
  const resumeSessionId = client.sessionId ?? options.resumeSessionId ?? takeover?.sessionId;
  // Routes first: a resume redirects notifications during initialize (docs/protocol.md#resume).
  const routes = new Map<string, { unsubscribe(): void }>();
  const bindAll = (): void => {
    for (const [processId, process] of processes) if (!routes.has(processId)) routes.set(processId, process.bind(rpc));
  };
  bindAll();
  const admit = client.sessionId === undefined ? options.admit : undefined;
  const reading = rpc.open();
  const shake = (resume: string | undefined): Observable<Session> =>
    handshake(rpc, {
      clientName: options.clientName,
      resumeSessionId: resume,
      ...(options.initializeTimeoutMs === undefined ? {} : { timeoutMs: options.initializeTimeoutMs }),
      scheduler: client.scheduler,
    });
  const failed = (process: ProcessSink, error: ExecClientError): void => {
    if (takeover === undefined || !isUnknown(error, 'process')) return failProcess(processes, rpc, process, error);
    processes.delete(process.processId);
    process.abandon();
    takeover.processLost(process.processId, error);
  };
  const session$ =
    takeover === undefined
      ? shake(resumeSessionId)
      : shake(resumeSessionId).pipe(catchError((error: unknown) => sessionGone(processes, error, takeover, () => shake(undefined))));
  // The admission (first socket only) may register processes: they are bound before they are read, and a
  // notification that came for one before is in what its read brings.
  const admitted$ =
    admit === undefined
      ? session$
      : session$.pipe(mergeMap((session) => from(admit({ sessionId: session.sessionId, resumed: session.sessionId === resumeSessionId })).pipe(map(() => session))));
  const attempt$ = admitted$.pipe(
    tap(() => bindAll()),
    mergeMap((session) => recoverProcesses(rpc, processes.values(), failed, client.scheduler).pipe(map((): AttachEvent => ({ type: 'attached', rpc, session })))),
    tap(() => {
      detachFlow = client.flow.attach(rpc.reader);
      // A lost socket stops being paused (and counted) until its replacement is attached.
      rpc.closed$.subscribe(() => detachFlow());
    }),
    mergeMap((attached) => merge(of(attached), rpc.closed$.pipe(map((error): AttachEvent => ({ type: 'lost', error }))))),
    catchError((error: unknown) => of<AttachEvent>({ type: 'failedAttempt', error: asClientError(error), retryable: isRetryable(error) })),
  );
  // Runs when switchMap moves to the next socket, before that socket's handshake: the old one is retired first.
  return attempt$.pipe(
    finalize(() => {
      detachFlow();
      for (const route of routes.values()) route.unsubscribe();
      reading.unsubscribe();
    }),
  );
}

/** A takeover's resume was refused: an unknown session is gone (a plain initialize follows); anything else fails the attempt. */
function sessionGone(processes: Map<string, ProcessSink>, error: unknown, takeover: SessionTakeover, plain: () => Observable<Session>): Observable<Session> {
  if (!isUnknown(error, 'session')) return throwError(() => error);
  for (const process of [...processes.values()]) process.abandon();
  processes.clear();
  takeover.sessionLost(error);
  return plain();
}

function failProcess(processes: Map<string, ProcessSink>, rpc: RpcConnection, process: ProcessSink, error: ExecClientError): void {
  processes.delete(process.processId);
  process.fail(error);
  // Best effort: do not leave a process running that nobody can follow any more.
  rpc.request('process/terminate', { processId: process.processId }).subscribe({ error: () => undefined });
}
