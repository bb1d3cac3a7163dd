import type { Subscriber } from 'rxjs';
import { Observable } from 'rxjs';
import { TransportClosedError } from '../errors';
import { toBuffer } from '../wire/bytes';
import type { CallOptions, RpcConnection } from '../rpc/rpc-connection';
import type { HttpBodyDeltaNotification, HttpRequestParams, HttpRequestResponse } from '../wire/http';
import type { BodyOrderLimits } from './body-order';
import { BodyOrder, DEFAULT_BODY_ORDER_LIMITS } from './body-order';
import type { HttpEvent } from './http-types';
import { HttpBodyError } from './http-types';

/**
 * Sends `http/request` (with `streamResponse: true` in `params`) on `rpc` and streams the response: emits
 * the head once, then each non-empty body delta in seq order (reordered, duplicates dropped); completes
 * at the delta with `done: true`. Errors with the request's RpcError / RequestTimeoutError,
 * {@link HttpBodyError} at a delta with a non-null `error`, ProtocolError when the reorder buffer overflows, or
 * TransportClosedError when the connection drops before the last delta (a body is never resumed:
 * docs/protocol.md#http-requests). Unsubscribing stops listening; the executor cannot be told to stop, so
 * later deltas for this `requestId` are ignored.
 */
export function streamResponse(rpc: RpcConnection, params: HttpRequestParams, options: CallOptions, limits: BodyOrderLimits = DEFAULT_BODY_ORDER_LIMITS): Observable<HttpEvent> {
  return new Observable<HttpEvent>((subscriber) => {
    const order = new BodyOrder(params.requestId, limits);
    // Deltas that arrive before the head are held here until it is emitted.
    let early: HttpBodyDeltaNotification[] | undefined = [];
    const publish = (delta: HttpBodyDeltaNotification): void => {
      try {
        for (const ready of order.accept(delta)) if (!emitDelta(subscriber, params.requestId, ready)) return;
      } catch (error: unknown) {
        subscriber.error(error);
      }
    };
    // Subscribe to the deltas before the request is sent, so none can be missed.
    // They arrive decoded (a delta that fails its codec goes to the connection's diagnostics, not here).
    const subscription = rpc.notifications('http/request/bodyDelta').subscribe({
      next: (delta) => {
        if (delta.requestId !== params.requestId) return;
        if (early === undefined) publish(delta);
        else early.push(delta);
      },
      complete: () => subscriber.error(rpc.closeError ?? new TransportClosedError('remote', 1006, 'connection closed during the response body')),
    });
    const request = rpc.request('http/request', params, options).subscribe({
      next: (head) => {
        emitHead(subscriber, head);
        const held = early ?? [];
        early = undefined;
        for (const delta of held) publish(delta);
      },
      error: (error: unknown) => subscriber.error(error),
    });
    subscription.add(request);
    return subscription;
  });
}

function emitHead(subscriber: Subscriber<HttpEvent>, head: HttpRequestResponse): void {
  subscriber.next({ type: 'head', status: head.status, headers: head.headers });
  // The streamed result carries an empty body; pass on anything it does carry, ahead of the deltas.
  if (head.bodyBase64.byteLength > 0) subscriber.next({ type: 'body', chunk: toBuffer(head.bodyBase64) });
}

/** Emits one in-order delta; returns whether more may follow. */
function emitDelta(subscriber: Subscriber<HttpEvent>, requestId: string, delta: HttpBodyDeltaNotification): boolean {
  if (delta.deltaBase64.byteLength > 0) subscriber.next({ type: 'body', chunk: toBuffer(delta.deltaBase64) });
  if (delta.error !== null) {
    subscriber.error(new HttpBodyError(requestId, delta.seq, delta.error));
    return false;
  }
  if (delta.done) {
    subscriber.complete();
    return false;
  }
  return !subscriber.closed;
}
