import type { Observable } from 'rxjs';
import { defer, firstValueFrom } from 'rxjs';
import { map, mergeMap } from 'rxjs/operators';
import { toBuffer, toBytes } from '../wire/bytes';
import type { CallOptions } from '../rpc/rpc-connection';
import type { ExecSession } from '../session/exec-session';
import type { HttpRequestParams } from '../wire/http';
import type { BodyOrderLimits } from './body-order';
import { DEFAULT_BODY_ORDER_LIMITS } from './body-order';
import type { HttpEvent, HttpRequest, HttpResponse } from './http-types';
import { streamResponse } from './stream-response';

/** Options of {@link ExecHttpClient}. */
export interface ExecHttpClientOptions {
  /**
   * Makes the `requestId` of a request that does not bring its own (unique per connection until its
   * final body delta).
   * @default `http-request-1`, `http-request-2`, … (one counter per Node process)
   */
  readonly newRequestId?: () => string;
  /** How many out-of-order body deltas (and bytes) a stream may hold. @default 256 deltas, 16 MiB */
  readonly bodyOrderLimits?: BodyOrderLimits;
}

let requestCounter = 0;
const defaultRequestId = (): string => {
  requestCounter += 1;
  return `http-request-${requestCounter}`;
};

/**
 * HTTP(S) requests made by the executor (`http/request`, docs/protocol.md#http-requests), from
 * {@link Environment.getHttpClient}. Calls wait while the client recovers; a call whose socket dies rejects with
 * TransportClosedError and is never sent again. The call itself (not the HTTP exchange) times out after
 * the connection's request timeout unless `options.timeoutMs` says otherwise: give it more than the
 * request's `timeoutMs`.
 */
export class ExecHttpClient {
  private readonly makeRequestId: () => string;
  private readonly limits: BodyOrderLimits;

  /** @internal Built by its Environment (the session is internal). */
  constructor(
    private readonly client: ExecSession,
    options: ExecHttpClientOptions = {},
  ) {
    this.makeRequestId = options.newRequestId ?? defaultRequestId;
    this.limits = options.bodyOrderLimits ?? DEFAULT_BODY_ORDER_LIMITS;
  }

  /** A fresh `requestId` from the client's generator (`ExecHttpClientOptions.newRequestId`), for a request that names its own. */
  nextRequestId(): string {
    return this.makeRequestId();
  }

  /**
   * Sends the request and resolves with the whole response (status, headers, body). Rejects with RpcError
   * (-32603 `http/request failed: …` for an unreachable host, -32602 for a non-http scheme),
   * RequestTimeoutError, the `reason` of an aborted `options.signal`, TransportClosedError, or the client's failure.
   */
  request(request: HttpRequest, options: CallOptions = {}): Promise<HttpResponse> {
    const params = this.toParams(request, false);
    return firstValueFrom(
      this.client.call('http/request', params, options).pipe(map((r) => ({ status: r.status, headers: r.headers, body: toBuffer(r.bodyBase64) }))),
    );
  }

  /**
   * Sends the request with `streamResponse: true`. Cold: each subscription is one request. Emits the head
   * (`{type: 'head', status, headers}`) once, then the body as `{type: 'body', chunk}` pieces in order
   * (`http/request/bodyDelta` notifications, reordered by seq); completes at the final delta. Errors with
   * the request's errors, HttpBodyError when the executor reports a body failure, or
   * TransportClosedError when the connection drops before the body ends (a body is never resumed).
   * Unsubscribing stops listening (the executor keeps sending; those deltas are ignored).
   */
  stream(request: HttpRequest, options: CallOptions = {}): Observable<HttpEvent> {
    return defer(() => {
      const params = this.toParams(request, true);
      return this.client.connection().pipe(mergeMap((rpc) => streamResponse(rpc, params, options, this.limits)));
    });
  }

  private toParams(request: HttpRequest, stream: boolean): HttpRequestParams {
    const { headers, body, timeoutMs, redirectPolicy } = request;
    return {
      method: request.method,
      url: request.url,
      requestId: request.requestId ?? this.makeRequestId(),
      ...(headers === undefined ? {} : { headers: [...headers] }),
      ...(body === undefined ? {} : { bodyBase64: body === null ? null : toBytes(body) }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(redirectPolicy === undefined ? {} : { redirectPolicy }),
      ...(stream ? { streamResponse: true } : {}),
    };
  }
}
