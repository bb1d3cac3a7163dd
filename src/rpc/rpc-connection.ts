import type { SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, Observable, Subject } from 'rxjs';
import * as E from 'fp-ts/lib/Either';
import { AbortedError, FrameTooLargeError, TransportClosedError } from '../errors';
import { frames } from '../transport/socket-port';
import type { SocketPort } from '../transport/socket-port';
import type { Inbound } from '../wire/jsonrpc';
import { encodeNotification, encodeRequest, parseInbound, UNATTRIBUTED_ERROR_ID } from '../wire/jsonrpc';
import { MAX_INBOUND_FRAME_BYTES } from '../wire/limits';
import type { MethodName, ParamsOf, ResultOf } from '../wire/methods';
import { encodeParams } from '../wire/methods';
import type { Diagnostic } from './diagnostics';
import type { KeepaliveOptions } from './keepalive';
import { silentPeer } from './keepalive';
import { NotificationRouter } from './notification-router';
import type { ProcessWireEvent } from './notification-router';
import type { CallSink, Reply } from './pending-calls';
import { PendingCalls } from './pending-calls';
import { toRpcError } from './rpc-error';
import type { ServerRequestHandler } from './server-requests';
import { ServerRequests } from './server-requests';

/** The default per-call timeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export type { KeepaliveOptions } from './keepalive';

/** Options of {@link RpcConnection}. */
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
}

/** Per-call options. */
export interface CallOptions {
  /** Overrides the connection's default timeout for this call. */
  readonly timeoutMs?: number;
  /** Aborting fails the call with AbortedError (the reply, if it comes, is reported as unknown). */
  readonly signal?: AbortSignal;
}

const refuse = (sink: CallSink<never>, error: unknown): (() => void) => {
  sink.error(error);
  return () => undefined;
};

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
  private readonly maxFrameBytes: number;
  private readonly pongs = new Subject<void>();
  private nextId = 1;
  private closedError: TransportClosedError | undefined;
  private keepaliveFailure: string | undefined;

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
    this.maxFrameBytes = options.maxOutboundFrameBytes ?? MAX_INBOUND_FRAME_BYTES;
    const diagnose = (d: Diagnostic): void => this.diagnosticsSubject.next(d);
    this.router = new NotificationRouter(diagnose);
    this.pending = new PendingCalls(this.scheduler);
    this.serverRequests = new ServerRequests(options.serverRequests, {
      send: (frame) => {
        if (this.port.isOpen) this.port.send(frame);
      },
      close: (reason) => this.close(reason),
      diagnose,
    });
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
    const reading = frames(this.port, () => this.pongs.next()).subscribe({
      next: (frame) => this.onFrame(frame),
      error: (error: unknown) => this.onClosed(error instanceof TransportClosedError ? error : new TransportClosedError('remote', 1006, String(error))),
    });
    if (this.options.keepalive !== undefined && this.options.keepalive !== false) reading.add(this.startKeepalive(this.options.keepalive));
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
   * diagnostics). Its timeout shares one timer per distinct timeout value. Errors with RpcError (or NotFoundError / SpawnError),
   * DecodeError (the result failed its codec; this call alone), RequestTimeoutError, AbortedError,
   * FrameTooLargeError (nothing was sent) or TransportClosedError. Unsubscribing stops waiting; a late
   * reply is reported to diagnostics.
   */
  request<M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions = {}): Observable<ResultOf<M>> {
    return new Observable<ResultOf<M>>((subscriber) =>
      this.startCall(method, params, options, {
        next: (result) => {
          subscriber.next(result);
          subscriber.complete();
        },
        error: (error) => subscriber.error(error),
      }),
    );
  }

  /** Promise twin of {@link request}: resolves with the result or rejects with the same typed errors. */
  call<M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions = {}): Promise<ResultOf<M>> {
    return new Promise<ResultOf<M>>((resolve, reject) => {
      this.startCall(method, params, options, { next: resolve, error: reject });
    });
  }

  /**
   * One call: registers the reply route, arms the timeout and the abort listener, then sends. The
   * returned function (idempotent) drops all three; it runs on settle and on unsubscribe.
   */
  private startCall<M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions, sink: CallSink<ResultOf<M>>): () => void {
    const refused = this.closedError ?? (options.signal?.aborted === true ? new AbortedError(method) : undefined);
    if (refused !== undefined) return refuse(sink, refused);
    const id = this.nextId++;
    const frame = encodeRequest(id, method, encodeParams(method, params));
    const tooLarge = this.frameTooLarge(method, frame);
    if (tooLarge !== undefined) return refuse(sink, tooLarge);
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const call = this.pending.add(id, method, timeoutMs, options.signal, sink);
    // The route is registered before sending, so a synchronous answer cannot be missed.
    try {
      this.port.send(frame);
    } catch (error: unknown) {
      call.fail(error);
    }
    return call.drop;
  }

  /** Sends the `initialized` notification: the only notification a client may send (others close the connection). */
  sendInitialized(): void {
    this.port.send(encodeNotification('initialized', {}));
  }

  /**
   * The decoded params of every notification with this method (fs/missingChanged,
   * http/request/bodyDelta, network/policyDecision). Hot: only what arrives while subscribed. Completes
   * when the connection closes.
   */
  notifications(method: string): Observable<unknown> {
    return this.router.byMethod(method);
  }

  /**
   * The wire events of one process (decoded output, exited, closed, and `malformed` holes), routed by
   * processId through one lookup. One subscriber per process; completes when the connection closes.
   */
  processEvents(processId: string): Observable<ProcessWireEvent> {
    return this.router.byProcess(processId);
  }

  private frameTooLarge(method: string, frame: string): FrameTooLargeError | undefined {
    // A UTF-16 length bounds the UTF-8 size from both sides; measure only when it could be over.
    if (frame.length * 3 <= this.maxFrameBytes) return undefined;
    const bytes = Buffer.byteLength(frame, 'utf8');
    return bytes > this.maxFrameBytes ? new FrameTooLargeError(method, bytes, this.maxFrameBytes) : undefined;
  }

  private onFrame(frame: string | Uint8Array): void {
    const text = typeof frame === 'string' ? frame : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('utf8');
    const parsed = parseInbound(text);
    if (E.isLeft(parsed)) {
      this.diagnosticsSubject.next({ type: 'unparsableFrame', error: parsed.left });
      return;
    }
    const message = parsed.right;
    if (this.messagesSubject.observed) {
      this.messagesSubject.next(message);
      // A subscriber closed the connection: nothing is left to act on this message.
      if (this.closedError !== undefined) return;
    }
    switch (message.type) {
      case 'response':
      case 'error':
        return this.onReply(message);
      case 'notification':
        return this.router.dispatch(message.method, message.params);
      case 'request':
        return this.serverRequests.handle(message.id, message.method, message.params);
    }
  }

  private onReply(reply: Reply): void {
    if (this.pending.settle(reply)) return;
    if (reply.type === 'error' && reply.id === UNATTRIBUTED_ERROR_ID) {
      this.diagnosticsSubject.next({ type: 'unattributedError', error: toRpcError('(unattributed)', reply.error) });
      return;
    }
    this.diagnosticsSubject.next({ type: 'unknownResponse', id: reply.id });
  }

  private startKeepalive(settings: KeepaliveOptions): Subscription {
    return silentPeer(this.port, this.pongs, settings, this.scheduler).subscribe((failure) => {
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
