/**
 * `ExecClient`: one logical client across sockets: its state, the recovery deadline, the live processes
 * carried across replacements, and calls that wait for recovery (one socket's attempt: socket-attempt.ts).
 */
import type { Observable, SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, defer, ReplaySubject, EMPTY, firstValueFrom, of, Subject, throwError, timer } from 'rxjs';
import { distinctUntilChanged, filter, map, mergeMap, retry, switchMap, take } from 'rxjs/operators';
import type { ExecClientError } from '../errors';
import { ClosedError, ProtocolError, ResumeFailedError, TransportClosedError } from '../errors';
import { ConnectionFlow } from '../rpc/connection-flow';
import type { CallOptions, RpcConnection } from '../rpc/rpc-connection';
import { abortable } from '../rpc/abort';
import type { SocketPort } from '../transport/socket-port';
import type { EnvironmentInfo } from '../wire/environment';
import type { MethodName, ParamsOf, ResultOf } from '../wire/methods';
import { isReplayable } from '../wire/methods';
import { asClientError, formatSeconds, refusalReason } from './attempt-errors';
import type { ExecClientOptions } from './exec-client-options';
import { DEFAULT_RECOVERY_DEADLINE_MS } from './exec-client-options';
import type { ClientState, ExecSession, TerminalClientState } from './exec-session';
import { isTerminal } from './exec-session';
import type { ProcessSink } from './process-sink';
import type { AttachEvent, AttemptOutcome } from './socket-attempt';
import { socketAttempt } from './socket-attempt';

/**
 * One logical exec-server client across sockets: a `switchMap` over the admitted sockets, so the old
 * socket is retired (closed) before the new one's handshake starts; each new socket resumes the saved
 * session and reads every live process from its last published seq before calls run on it.
 * The owner calls `start()` once and `close()` when done.
 */
export class ExecClient implements ExecSession {
  // A ReplaySubject, not a BehaviorSubject: once completed after `failed`, it still replays that state.
  private readonly stateSubject = new ReplaySubject<ClientState>(1);
  private current: ClientState = { type: 'connecting' };
  private readonly attemptsSubject = new Subject<AttemptOutcome>();
  private readonly processes = new Map<string, ProcessSink>();
  private readonly scheduler: SchedulerLike;
  private readonly deadlineMs: number;
  private running: Subscription | undefined;
  private sessionIdValue: string | undefined;
  private infoValue: EnvironmentInfo | undefined;
  /** What ended the last connection: the failure of a recovery names it (codex's message), whatever the later attempts said. */
  private lostWith: ExecClientError | undefined;

  /** The current state; replays it to each subscriber; completes after `failed`. */
  readonly state$: Observable<ClientState> = this.stateSubject.asObservable();
  /** Each socket attempt's outcome, for socket sources. Completes when the client fails or closes. */
  readonly attempts$: Observable<AttemptOutcome> = this.attemptsSubject.asObservable();
  /** Flow control across sockets: holds pause the current socket, and each replacement once its session is resumed. */
  readonly flow: ConnectionFlow;

  constructor(
    private readonly sockets$: Observable<SocketPort>,
    private readonly options: ExecClientOptions,
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.deadlineMs = options.recoveryDeadlineMs ?? DEFAULT_RECOVERY_DEADLINE_MS;
    this.flow = new ConnectionFlow(this.scheduler);
    this.stateSubject.next(this.current);
  }

  get state(): ClientState {
    return this.current;
  }
  get sessionId(): string | undefined {
    return this.sessionIdValue;
  }
  /** Environment info from the last initialize reply that carried one. */
  get cachedInfo(): EnvironmentInfo | undefined {
    return this.infoValue;
  }
  /** Live processes carried across replacements (bookkeeping). */
  get processCount(): number {
    return this.processes.size;
  }

  /** The ids of the live processes. */
  liveProcessIds(): string[] {
    return [...this.processes.keys()];
  }

  /** Starts attaching sockets. Resolves once the first session is installed; rejects if the first attempt fails. */
  start(): Promise<void> {
    if (this.running !== undefined) throw new ProtocolError('ExecClient.start() called twice');
    const running = this.sockets$.pipe(switchMap((port) => this.attach(port))).subscribe({
      next: (event) => this.onAttachEvent(event),
      error: (error: unknown) => this.fail(asClientError(error)),
    });
    running.add(this.watchRecoveryDeadline());
    this.running = running;
    if (isTerminal(this.state)) running.unsubscribe();
    return firstValueFrom(this.state$.pipe(filter((s) => s.type === 'connected' || isTerminal(s)))).then((s) => {
      if (isTerminal(s)) throw s.error;
    });
  }

  /**
   * A socket source could not make a new socket while recovering (a failed re-dial): the state shows
   * `error` (still `recovering`), and `attempts$` answers `retry`. The recovery deadline bounds the retries.
   */
  dialFailed(error: unknown): void {
    if (this.state.type === 'recovering') this.onFailedAttempt(asClientError(error), true);
  }

  /** Marks the connection as recovering before the host hands in a replacement (the old socket is retired next). */
  markRecovering(reason: string): void {
    const state = this.state;
    if (state.type === 'connected') this.recovering(new TransportClosedError('local', 1006, reason));
  }

  /**
   * Registers a started process: it is read on every recovery and bound to every later connection until
   * removed. `route` is its binding to the connection it started on; it is dropped with that connection.
   */
  addProcess(process: ProcessSink, route?: Subscription | { unsubscribe(): void }): void {
    const state = this.state;
    if (isTerminal(state)) {
      route?.unsubscribe();
      process.fail(state.error);
      return;
    }
    this.processes.set(process.processId, process);
  }

  /** Forgets a process (closed, failed or released). */
  removeProcess(processId: string): void {
    this.processes.delete(processId);
  }

  /**
   * Emits the connected RpcConnection once, waiting while connecting or recovering; errors with the
   * failure once failed. With `failFast`, a recovering client errors at once (environment/status).
   */
  connection(failFast = false): Observable<RpcConnection> {
    return this.state$.pipe(
      filter((s) => isTerminal(s) || (s.type === 'connected' && s.rpc.closeError === undefined) || (failFast && s.type === 'recovering')),
      take(1),
      mergeMap((s) => (s.type === 'connected' ? of(s.rpc) : throwError(() => (s.type === 'connecting' ? new ClosedError('not connected') : s.error)))),
    );
  }

  /**
   * Calls `method` on the current connection, waiting for recovery first. A call whose socket dies
   * before the reply fails with TransportClosedError, unless the method table marks it safe to send
   * again (process/read, process/write with its writeId, process/terminate): then it waits for the next
   * connection and is sent again. Emits the result once; errors as RpcConnection.request does. An abort
   * of `options.signal` errors with its `reason` at any point: while waiting for recovery (nothing
   * sent), for the reply, or between two sends of a replayable call.
   */
  call<M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions = {}): Observable<ResultOf<M>> {
    const once = defer(() => {
      const rpc = this.liveRpc();
      return rpc === undefined ? this.connection().pipe(mergeMap((next) => next.request(method, params, options))) : rpc.request(method, params, options);
    });
    const sendAgain = (error: unknown): Observable<number> => (error instanceof TransportClosedError && !isTerminal(this.state) ? of(0) : throwError(() => error));
    const sent = isReplayable(method) ? once.pipe(retry({ delay: sendAgain })) : once;
    return sent.pipe(abortable(options.signal));
  }

  /** The connected RpcConnection when there is one that is still open (the fast path of every call). */
  liveRpc(): RpcConnection | undefined {
    const state = this.current;
    return state.type === 'connected' && state.rpc.closeError === undefined ? state.rpc : undefined;
  }

  /** Fails the client (terminal): every process fails, the socket closes, waiting calls error with `error`. */
  fail(error: ExecClientError): void {
    this.end({ type: 'failed', error });
  }

  /**
   * Closes the client (terminal, state `closed`): the socket closes (the executor keeps the session for
   * its retention time); processes fail and waiting calls error with a ClosedError naming `reason`.
   */
  close(reason = 'exec-server client closed'): void {
    this.end({ type: 'closed', error: new ClosedError(reason) });
  }

  private end(state: TerminalClientState): void {
    if (isTerminal(this.state)) return;
    // A takeover that never attached leaves its processes' histories as they were: the host may try again.
    const untouched = this.state.type === 'connecting' && this.options.takeover !== undefined;
    this.setState(state);
    for (const process of [...this.processes.values()]) {
      if (untouched) process.abandon();
      else process.fail(state.error);
    }
    this.processes.clear();
    this.attemptsSubject.complete();
    this.running?.unsubscribe();
    this.stateSubject.complete();
  }

  /** One socket's attempt (see `socketAttempt`), with what the client holds when it starts. */
  private attach(port: SocketPort): Observable<AttachEvent> {
    return defer(() => socketAttempt(port, { options: this.options, scheduler: this.scheduler, flow: this.flow, sessionId: this.sessionIdValue, processes: this.processes }));
  }

  private onAttachEvent(event: AttachEvent): void {
    switch (event.type) {
      case 'attached':
        this.sessionIdValue = event.session.sessionId;
        if (event.session.environmentInfo !== undefined) this.infoValue = event.session.environmentInfo;
        this.setState({ type: 'connected', rpc: event.rpc, sessionId: event.session.sessionId });
        return this.attemptsSubject.next('attached');
      case 'lost':
        // A transport that cannot reconnect (stdio) fails at once: no `disconnected` flicker before `failed`.
        if (!this.options.reconnectable) {
          return this.fail(new ResumeFailedError('noReconnect', event.error.message, 'the transport cannot reconnect', { cause: event.error }));
        }
        if (this.state.type === 'connected') this.recovering(event.error);
        return this.attemptsSubject.next('lost');
      case 'failedAttempt':
        return this.onFailedAttempt(event.error, event.retryable);
    }
  }

  private onFailedAttempt(error: ExecClientError, retryable: boolean): void {
    const state = this.state;
    if (state.type === 'connecting') return this.fail(error);
    const disconnect = this.lostWith?.message ?? 'exec-server transport disconnected';
    if (retryable && this.options.reconnectable) {
      // Still recovering, now for this reason: the state says so (a UI shows the newest error).
      if (state.type === 'recovering') this.setState({ type: 'recovering', error });
      return this.attemptsSubject.next('retry');
    }
    this.attemptsSubject.next('fatal');
    this.fail(new ResumeFailedError(refusalReason(error), disconnect, error.message, { cause: error }));
  }

  private watchRecoveryDeadline(): Subscription {
    return this.state$
      .pipe(
        map((s) => s.type === 'recovering'),
        distinctUntilChanged(),
        switchMap((recovering) => (recovering ? timer(this.deadlineMs, this.scheduler) : EMPTY)),
      )
      .subscribe(() => {
        const disconnect = this.lostWith?.message ?? 'exec-server transport disconnected';
        // The last attempt's error (a failed re-dial, a refused resume) says why recovery did not happen.
        const last = this.state.type === 'recovering' ? this.state.error : undefined;
        this.fail(new ResumeFailedError('timeout', disconnect, `recovery timed out after ${formatSeconds(this.deadlineMs)}`, last === undefined ? undefined : { cause: last }));
      });
  }

  /** A connected client lost its connection (or is being handed a replacement): recovery starts. */
  private recovering(error: ExecClientError): void {
    this.lostWith = error;
    this.setState({ type: 'recovering', error });
  }

  private setState(state: ClientState): void {
    if (isTerminal(this.current)) return;
    this.current = state;
    this.stateSubject.next(state);
  }
}
