import { Subscription } from 'rxjs';
import { ProtocolError } from '../errors';
import type { CallOptions } from '../rpc/rpc-connection';
import type { HttpHeader } from '../wire/http';
import { BoundedBody } from './fetch-body';
import type { ExecHttpClient } from './http-client';
import type { HttpRequest } from './http-types';

/** A hop's status line and headers, as the executor returned them. */
export interface HopHead {
  readonly status: number;
  readonly headers: readonly HttpHeader[];
}

/** One `http/request` of a fetch: its head (a promise) and its body (bounded, filling from the start). */
export interface Hop {
  /** Resolves with the head; rejects with the request's error, or the signal's reason on an abort before it. */
  readonly head: Promise<HopHead>;
  /** The body: its stream is the Response's; cancelling it stops listening. */
  readonly body: BoundedBody;
}

/**
 * Sends `request` (which carries its `requestId`) streamed, and listens until the body ends, fails, is
 * cancelled, overflows `bufferBytes`, or `signal` aborts (before the head: the head rejects with the
 * reason; after: the body stream errors with it). Stopping only stops listening: the executor reads on.
 */
export function startHop(
  client: ExecHttpClient,
  request: HttpRequest & { readonly requestId: string },
  call: CallOptions,
  bufferBytes: number,
  signal: AbortSignal | undefined,
): Hop {
  const subscription = new Subscription();
  let resolveHead: (head: HopHead) => void = () => undefined;
  let rejectHead: (error: unknown) => void = () => undefined;
  const head = new Promise<HopHead>((resolve, reject) => {
    resolveHead = resolve;
    rejectHead = reject;
  });
  const onAbort = (): void => {
    const reason: unknown = signal?.reason;
    rejectHead(reason);
    body.fail(reason);
  };
  const body = new BoundedBody(request.requestId, bufferBytes, () => {
    signal?.removeEventListener('abort', onAbort);
    subscription.unsubscribe();
  });
  signal?.addEventListener('abort', onAbort, { once: true });
  let headSeen = false;
  subscription.add(
    client.stream(request, call).subscribe({
      next: (event) => {
        if (event.type === 'body') return body.push(event.chunk);
        headSeen = true;
        resolveHead({ status: event.status, headers: event.headers });
      },
      error: (error: unknown) => {
        rejectHead(error);
        body.end(error);
      },
      complete: () => {
        if (!headSeen) rejectHead(new ProtocolError(`http/request ${request.requestId} ended without a head`));
        body.end();
      },
    }),
  );
  return { head, body };
}
