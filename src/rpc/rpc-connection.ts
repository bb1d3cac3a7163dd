import type { SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, Observable, Subject } from 'rxjs';
import * as E from 'fp-ts/lib/Either';
import { AbortedError, FrameTooLargeError, ProtocolError, RequestTimeoutError, TransportClosedError } from '../errors';
import type { ExecClientError } from '../errors';
import { frames } from '../transport/socket-port';
import type { SocketPort } from '../transport/socket-port';
import type { Inbound, RequestId } from '../wire/jsonrpc';
import { encodeErrorResponse, encodeNotification, encodeRequest, encodeResponse, ErrorCodes, parseInbound, UNATTRIBUTED_ERROR_ID } from '../wire/jsonrpc';
import { MAX_INBOUND_FRAME_BYTES } from '../wire/limits';
import type { MethodName, ParamsOf, ResultOf } from '../wire/methods';
import { decodeResult, encodeParams } from '../wire/methods';
import type { Diagnostic } from './diagnostics';
import { Deadlines } from './deadlines';
import type { KeepaliveOptions } from './keepalive';
import { silentPeer } from './keepalive';
import { NotificationRouter } from './notification-router';
import type { ProcessWireEvent } from './notification-router';
import { toRpcError } from './rpc-error';

/** The default per-call timeout. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export type { KeepaliveOptions } from './keepalive';

/** What a server-to-client request handler answers: a result, or a JSON-RPC error. */
export type ServerRequestOutcome = { readonly result: unknown } | { readonly error: { readonly code: number; readonly message: string } };

/** Answers server-to-client requests (only `network/policyRequest` exists in 0.171.0). */
export type ServerRequestHandler = (method: string, params: unknown) => Promise<ServerRequestOutcome> | undefined;

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

interface PendingCall {
  readonly method: MethodName;
  readonly settle: (reply: Inbound & { readonly type: 'response' | 'error' }) => void;
  readonly fail: (error: unknown) => void;
}

interface CallSink<T> {
  readonly next: (result: T) => void;
  readonly error: (error: unknown) => void;
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
  private readonly pending = new Map<RequestId, PendingCall>();
  private readonly router: NotificationRouter;
  private readonly diagnosticsSubject = new Subject<Diagnostic>();
  private readonly closedSubject = new Subject<TransportClosedError>();
  private readonly scheduler: SchedulerLike;
  private readonly maxFrameBytes: number;
  private readonly pongs = new Subject<void>();
  private readonly deadlines: Deadlines;
  private nextId = 1;
  private closedError: TransportClosedError | undefined;
  private keepaliveFailure: string | undefined;

  /** Connection-level problems (unparsable frames, id -1 errors, replies to unknown ids). Completes on close. */
  readonly diagnostics$ = this.diagnosticsSubject.asObservable();

  constructor(
    readonly port: SocketPort,
    private readonly options: RpcConnectionOptions = {},
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.maxFrameBytes = options.maxOutboundFrameBytes ?? MAX_INBOUND_FRAME_BYTES;
    this.router = new NotificationRouter((d) => this.diagnosticsSubject.next(d));
    this.deadlines = new Deadlines(this.scheduler);
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
   * request with a fresh id, correlated with its reply by that id (take(1) on a keyed route: a Map
   * lookup, not one filter per pending call). Errors with RpcError (or NotFoundError / SpawnError),
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
    const signal = options.signal;
    const done = (): void => {
      this.pending.delete(id);
      timer.cancel();
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (error: unknown): void => {
      done();
      sink.error(error);
    };
    const onAbort = (): void => fail(new AbortedError(method));
    this.pending.set(id, {
      method,
      fail,
      settle: (reply) => {
        done();
        if (reply.type === 'error') return sink.error(toRpcError(method, reply.error));
        const result = decodeResult(method, reply.result);
        return E.isLeft(result) ? sink.error(result.left) : sink.next(result.right);
      },
    });
    const timer = this.deadlines.arm(timeoutMs, () => fail(new RequestTimeoutError(method, timeoutMs)));
    signal?.addEventListener('abort', onAbort, { once: true });
    // The route is registered before sending, so a synchronous answer cannot be missed.
    try {
      this.port.send(frame);
    } catch (error: unknown) {
      fail(error);
    }
    return done;
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
    switch (message.type) {
      case 'response':
      case 'error':
        return this.onReply(message);
      case 'notification':
        return this.router.dispatch(message.method, message.params);
      case 'request':
        return this.onServerRequest(message.id, message.method, message.params);
    }
  }

  private onReply(reply: Inbound & { readonly type: 'response' | 'error' }): void {
    const call = this.pending.get(reply.id);
    if (call !== undefined) {
      call.settle(reply);
      return;
    }
    if (reply.type === 'error' && reply.id === UNATTRIBUTED_ERROR_ID) {
      this.diagnosticsSubject.next({ type: 'unattributedError', error: toRpcError('(unattributed)', reply.error) });
      return;
    }
    this.diagnosticsSubject.next({ type: 'unknownResponse', id: reply.id });
  }

  private readonly serverRequestsInFlight = new Set<RequestId>();

  private onServerRequest(id: RequestId, method: string, params: unknown): void {
    if (this.serverRequestsInFlight.has(id)) {
      // codex closes the transport on a duplicate in-flight server request id.
      this.report(method, new ProtocolError(`duplicate in-flight server request id ${String(id)} for ${method}`));
      this.close('duplicate server request id');
      return;
    }
    const outcome = this.options.serverRequests?.(method, params);
    if (outcome === undefined) {
      this.trySend(encodeErrorResponse(id, ErrorCodes.MethodNotFound, `exec-server client does not implement \`${method}\` yet`));
      return;
    }
    this.serverRequestsInFlight.add(id);
    outcome.then(
      (answer) => {
        this.serverRequestsInFlight.delete(id);
        this.trySend('result' in answer ? encodeResponse(id, answer.result) : encodeErrorResponse(id, answer.error.code, answer.error.message));
      },
      (error: unknown) => {
        this.serverRequestsInFlight.delete(id);
        this.trySend(encodeErrorResponse(id, ErrorCodes.InternalError, `exec-server client failed to handle \`${method}\``));
        this.report(method, new ProtocolError(`server request handler for ${method} failed: ${String(error)}`));
      },
    );
  }

  private report(method: string, error: ExecClientError): void {
    this.diagnosticsSubject.next({ type: 'serverRequestFailed', method, error });
  }

  private trySend(frame: string): void {
    if (this.port.isOpen) this.port.send(frame);
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
    for (const call of [...this.pending.values()]) call.fail(closeError);
    this.pending.clear();
    this.deadlines.clear();
    this.serverRequestsInFlight.clear();
    this.router.complete();
    this.closedSubject.next(closeError);
    this.closedSubject.complete();
    this.diagnosticsSubject.complete();
  }
}
