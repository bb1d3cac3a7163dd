import type { SchedulerLike } from 'rxjs';
import { defer, EMPTY, filter, merge, mergeMap, Observable, of, take, throwError, throwIfEmpty, timeout } from 'rxjs';
import * as E from 'fp-ts/lib/Either';
import { RequestTimeoutError, TransportClosedError } from '../../src/errors';
import type { CallOptions, RpcConnection } from '../../src/rpc/rpc-connection';
import { toRpcError } from '../../src/rpc/rpc-error';
import type { Inbound, RequestId } from '../../src/wire/jsonrpc';
import { encodeRequest } from '../../src/wire/jsonrpc';
import type { MethodName, ParamsOf, ResultOf } from '../../src/wire/methods';
import { decodeResult, encodeParams } from '../../src/wire/methods';

type Reply = Inbound & { readonly type: 'response' | 'error' };

const isReplyTo =
  (id: RequestId) =>
  (message: Inbound): message is Reply =>
    (message.type === 'response' || message.type === 'error') && message.id === id;

/** Errors with the signal's `reason` when `signal` aborts (at once if it already has); never emits. */
const aborted = (signal: AbortSignal | undefined): Observable<never> =>
  signal === undefined
    ? EMPTY
    : new Observable<never>((subscriber) => {
        const onAbort = (): void => subscriber.error(signal.reason);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        return () => signal.removeEventListener('abort', onAbort);
      });

/**
 * The textbook correlator of STYLE.md 2.5, built on {@link RpcConnection.messages$}: each call filters the
 * messages for the one reply with its id (one filter per pending call). It is the reference that
 * `RpcConnection.request` (a Map keyed by id, shared deadlines) is checked against in
 * `correlation.property.spec.ts`; it is not meant for production. It sends through `rpc.port` with
 * its own id counter and leaves the connection's own calls alone.
 */
export class ReferenceCorrelator {
  private nextId = 1;

  constructor(
    private readonly rpc: RpcConnection,
    private readonly scheduler: SchedulerLike,
    private readonly defaultTimeoutMs: number,
  ) {}

  /**
   * Sends `method` once and emits its decoded result, then completes. Errors with RpcError (or
   * NotFoundError / SpawnError), DecodeError, RequestTimeoutError, the signal's `reason`, or the connection's
   * TransportClosedError when it closes first (or had closed).
   */
  request<M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions = {}): Observable<ResultOf<M>> {
    return defer(() => {
      // Refused before taking an id, as RpcConnection refuses: a closed connection with its close error
      // (even when the signal has aborted too), an already-aborted signal with its reason.
      const closed = this.rpc.closeError;
      if (closed !== undefined) return throwError(() => closed);
      if (options.signal?.aborted === true) return throwError(() => options.signal?.reason);
      const id = this.nextId++;
      const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
      const reply$ = this.rpc.messages$.pipe(
        filter(isReplyTo(id)),
        take(1),
        // messages$ completes when the connection closes while the call waits.
        throwIfEmpty(() => this.rpc.closeError ?? new TransportClosedError('local', 1006, `closed before ${method} replied`)),
        mergeMap((reply): Observable<ResultOf<M>> => {
          if (reply.type === 'error') return throwError(() => toRpcError(method, reply.error));
          const result = decodeResult(method, reply.result);
          return E.isLeft(result) ? throwError(() => result.left) : of(result.right);
        }),
        timeout({ first: timeoutMs, scheduler: this.scheduler, with: () => throwError(() => new RequestTimeoutError(method, timeoutMs)) }),
      );
      // Subscribe to the reply before sending, so a synchronous answer cannot be missed.
      const send$ = defer(() => {
        this.rpc.port.send(encodeRequest(id, method, encodeParams(method, params)));
        return EMPTY;
      });
      return merge(reply$, aborted(options.signal), send$).pipe(take(1));
    });
  }
}
