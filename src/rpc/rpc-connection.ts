/**
 * `RpcConnection`: one JSON-RPC connection over a socket port, from `open()` to its close. What each
 * inbound message does is in inbound-dispatch.ts; its options are in rpc-options.ts.
 */
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler, Observable, Subject, Subscription } from 'rxjs';
import { TransportClosedError } from '../errors';
import type { SocketPort } from '../transport/socket-port';
import type { Inbound } from '../wire/jsonrpc';
import { encodeNotification } from '../wire/jsonrpc';
import { MAX_INBOUND_FRAME_BYTES } from '../wire/limits';
import type { ConnectionNotificationMethod, MethodName, NotificationParamsOf, ParamsOf, ResultOf } from '../wire/methods';
import { ConnectionFlow } from './connection-flow';
import type { Diagnostic } from './diagnostics';
import { readFrame } from './frame-reader';
import { InboundDispatch } from './inbound-dispatch';
import type { KeepaliveOptions } from './keepalive';
import { silentPeer } from './keepalive';
import { observedSink } from './observed-sink';
import type { CallOptions, RpcConnectionOptions } from './rpc-options';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './rpc-options';
import { NotificationRouter } from './notification-router';
import { PauseClock } from './pause-clock';
import { SocketReader } from './socket-reader';
import type { ProcessRoute } from './notification-router';
import type { CallSink, PendingCallHandle } from './pending-calls';
import { PendingCalls, ThenSink } from './pending-calls';
import { ServerRequests } from './server-requests';

export { DEFAULT_REQUEST_TIMEOUT_MS } from './rpc-options';
export type { CallObserver, CallOptions, KeepaliveOptions, RpcConnectionOptions } from './rpc-options';

/**
 * One JSON-RPC connection over a {@link SocketPort}: requests correlated by id, notifications routed by
 * method and process notifications by processId, server requests answered. It lives from `open()` until
 * the port closes or the Subscription `open()` returned is unsubscribed (which closes the port). When it
 * closes, every pending call fails at once with the same {@link TransportClosedError}.
 */
export class RpcConnection {
  private readonly pending: PendingCalls;
  private readonly router: NotificationRouter;
  private readonly serverRequests: ServerRequests;
  private readonly diagnosticsSubject = new Subject<Diagnostic>();
  private readonly messagesSubject = new Subject<Inbound>();
  private readonly closedSubject = new Subject<TransportClosedError>();
  private readonly scheduler: SchedulerLike;
  /** The running time of this connection: it stands still while the socket is paused. */
  private readonly clock: PauseClock;
  private readonly pongs = new Subject<void>();
  /** Where each frame read goes (`readFrame`'s handlers). */
  private readonly inbound: InboundDispatch;
  private closedError: TransportClosedError | undefined;
  private keepaliveFailure: string | undefined;

  /**
   * Flow control: `flow.hold()` keeps the socket unread (call deadlines and keepalive suspended) until
   * released; `flow.facts` says if, how often and how long it was paused. A session's shared flow when given.
   */
  readonly flow: ConnectionFlow;
  /** @internal What {@link flow} pauses: the socket, the call deadlines and the keepalive's clock. */
  readonly reader: SocketReader;

  /** Connection-level problems (unparsable frames, id -1 errors, replies to unknown ids). Completes on close. */
  readonly diagnostics$ = this.diagnosticsSubject.asObservable();

  /**
   * The socket as an Observable of messages: every inbound frame that parses as a JSON-RPC message,
   * decoded once (the same parse the connection routes; the same object to every subscriber), as a
   * request, response, error or notification, in arrival order.
   * - Hot: a subscriber gets the messages that arrive while it is subscribed, never earlier ones.
   *   Subscribing does not start reading (`open()` does) and, with no subscriber, nothing is emitted.
   * - Each message is emitted before the connection acts on it: before a reply settles the call it
   *   answers, a notification is dispatched, or a server request reaches its handler. If a subscriber
   *   closes the connection from inside `next`, that message is not acted on.
   * - Frames that do not parse are not emitted; they go to {@link diagnostics$} as `unparsableFrame`.
   *   Parsed messages the connection then ignores or reports (replies to unknown ids, unknown
   *   notifications, id -1 errors) are emitted like any other.
   * - Completes when the connection closes, after every pending call has failed with the close error
   *   (so {@link closeError} is set) and before {@link closed$} emits; a subscriber arriving after that
   *   completes at once. Never errors.
   * - Teardown: each subscriber unsubscribes when it is done (or the close completes it); unsubscribing
   *   never affects the connection.
   */
  readonly messages$: Observable<Inbound> = this.messagesSubject.asObservable();

  constructor(
    /** The socket it speaks over; the connection closes it when it closes. */ readonly port: SocketPort,
    private readonly options: RpcConnectionOptions = {},
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.clock = new PauseClock(this.scheduler);
    this.flow = options.flow ?? new ConnectionFlow(this.scheduler);
    const diagnose = (d: Diagnostic): void => this.diagnosticsSubject.next(d);
    this.router = new NotificationRouter(diagnose);
    this.pending = new PendingCalls(this.scheduler, options.maxOutboundFrameBytes ?? MAX_INBOUND_FRAME_BYTES, this.clock);
    this.reader = new SocketReader(port, this.clock, this.pending);
    this.serverRequests = new ServerRequests(options.serverRequests, {
      send: (frame) => {
        if (this.port.isOpen) this.port.send(frame);
      },
      close: (reason) => this.close(reason),
      diagnose,
    });
    this.inbound = new InboundDispatch(this.pending, this.router, this.serverRequests, this.diagnosticsSubject, this.messagesSubject, () => this.closedError !== undefined);
  }

  /** The error the connection closed with, once closed. */
  get closeError(): TransportClosedError | undefined {
    return this.closedError;
  }

  /** Number of calls waiting for a reply (bookkeeping). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Routes registered for processes (bookkeeping). */
  get processRouteCount(): number {
    return this.router.processRouteCount;
  }

  /**
   * Emits the close error once when the connection closes, then completes; replays it to late
   * subscribers. Never errors.
   */
  readonly closed$: Observable<TransportClosedError> = new Observable<TransportClosedError>((subscriber) => {
    if (this.closedError !== undefined) {
      subscriber.next(this.closedError);
      subscriber.complete();
      return undefined;
    }
    return this.closedSubject.subscribe(subscriber);
  });

  /**
   * Starts reading the port. Register process routes you already need before calling it: a resume may
   * redirect notifications before the initialize reply. Unsubscribing closes the port.
   */
  open(): Subscription {
    const reading = new Subscription();
    // The port's handlers call in directly: no Observable between the socket and the frame handler.
    reading.add(
      this.port.listen({
        message: (frame, ascii) => readFrame(frame, ascii === true, this.messagesSubject.observed, this.inbound),
        pong: () => this.pongs.next(),
        close: (initiator, code, reason) => {
          this.onClosed(new TransportClosedError(initiator, code, reason));
          reading.unsubscribe();
        },
      }),
    );
    if (this.options.keepalive !== undefined && this.options.keepalive !== false) reading.add(this.startKeepalive(this.options.keepalive));
    // A flow of its own is attached now; the session attaches its shared flow once the session is up.
    if (this.options.flow === undefined) reading.add(this.flow.attach(this.reader));
    // The listeners are gone by now, so settle what is pending here: we closed it.
    reading.add(() => {
      this.close();
      this.onClosed(new TransportClosedError('local', 1006, 'closed by client'));
    });
    return reading;
  }

  /** Closes the port (idempotent); pending calls fail with a TransportClosedError whose initiator is `local`. */
  close(reason?: string): void {
    this.port.close(reason);
  }

  /**
   * Sends `method` once and emits its decoded result, then completes. Cold: each subscription is one
   * request with a fresh id. The call is entered in a Map keyed by that id before the frame is sent, and
   * the frame handler settles it with one lookup when a reply with that id arrives (no filter per
   * pending call; the entry is removed as it settles, so a duplicate reply finds nothing and goes to
   * diagnostics). Its timeout shares one timer per distinct timeout value. Errors with RpcError (or
   * NotFoundError / SpawnError), DecodeError (the result failed its codec; this call alone),
   * RequestTimeoutError, the signal's `reason` when `options.signal` aborts (see {@link CallOptions.signal}),
   * FrameTooLargeError (nothing was sent) or TransportClosedError. Unsubscribing stops waiting; a late
   * reply is reported to diagnostics.
   */
  request<M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions = {}): Observable<ResultOf<M>> {
    return new Observable<ResultOf<M>>((subscriber) => {
      const call = this.startCall(method, params, options, {
        next: (result) => {
          subscriber.next(result);
          subscriber.complete();
        },
        error: (error) => subscriber.error(error),
      });
      return () => call.drop();
    });
  }

  /** Promise twin of {@link request}: resolves with the result or rejects with the same typed errors. */
  call<M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions = {}): Promise<ResultOf<M>> {
    return new Promise<ResultOf<M>>((resolve, reject) => {
      this.startCall(method, params, options, { next: resolve, error: reject });
    });
  }

  /**
   * @internal {@link call} mapping its outcome in the same promise: resolves with `onResult(result)`, or
   * with `onError(error)` where {@link call} would reject. The mappers must not throw.
   */
  callThen<M extends MethodName, T>(method: M, params: ParamsOf<M>, options: CallOptions, onResult: (result: ResultOf<M>) => T, onError: (error: unknown) => T): Promise<T> {
    return new Promise<T>((resolve) => {
      this.startCall(method, params, options, new ThenSink(resolve, onResult, onError));
    });
  }

  /** One call (see PendingCalls.start), refused at once (nothing sent) once closed or when the signal was already aborted. */
  private startCall<M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions, callSink: CallSink<ResultOf<M>>): PendingCallHandle {
    const onCall = this.options.onCall;
    const sink = onCall === undefined ? callSink : observedSink(callSink, method, this.scheduler, onCall, options.signal);
    const signal = options.signal;
    if (this.closedError !== undefined || signal?.aborted === true) {
      sink.error(this.closedError ?? signal?.reason);
      return REFUSED;
    }
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return this.pending.start(method, params, timeoutMs, options.signal, this.sendFrame, sink);
  }

  private readonly sendFrame = (frame: string): void => this.port.send(frame);

  /** Sends the `initialized` notification: the only notification a client may send (others close the connection). */
  sendInitialized(): void {
    this.port.send(encodeNotification('initialized', {}));
  }

  /**
   * The params of every `method` notification (`fs/missingChanged`, `http/request/bodyDelta`,
   * `network/policyDecision`), typed by the method and decoded once by its codec for every subscriber:
   * the method carries its params' type, as vscode-jsonrpc's `NotificationType<P>` does. Params that
   * fail the codec never reach a subscriber; they go to {@link diagnostics$} as `malformedNotification`.
   * Hot: only what arrives while subscribed. Completes when the connection closes (at once, once closed).
   * Never errors. Teardown: each subscriber unsubscribes when done; unsubscribing never affects the
   * connection. Process notifications are routed by processId, not here.
   */
  notifications<N extends ConnectionNotificationMethod>(method: N): Observable<NotificationParamsOf<N>> {
    return this.router.byMethod(method);
  }

  /**
   * @internal Routes one process's wire events (decoded output, exited, closed, and `malformed` holes) by
   * processId through one lookup, with no Observable: `route` is called for each event until the
   * returned function runs; its `complete` runs when another route replaces it or the connection closes.
   */
  routeProcess(processId: string, route: ProcessRoute): () => void {
    return this.router.route(processId, route);
  }

  private startKeepalive(settings: KeepaliveOptions): Subscription {
    return silentPeer(this.port, this.pongs, settings, this.clock).subscribe((failure) => {
      this.keepaliveFailure = failure;
      this.close(failure);
    });
  }

  private onClosed(error: TransportClosedError): void {
    if (this.closedError !== undefined) return;
    const closeError = this.keepaliveFailure === undefined ? error : new TransportClosedError('remote', error.closeCode, this.keepaliveFailure);
    this.closedError = closeError;
    this.pending.failAll(closeError);
    this.serverRequests.clear();
    this.router.complete();
    this.messagesSubject.complete();
    this.closedSubject.next(closeError);
    this.closedSubject.complete();
    this.diagnosticsSubject.complete();
  }
}

const REFUSED: PendingCallHandle = { fail: () => undefined, drop: () => undefined };
