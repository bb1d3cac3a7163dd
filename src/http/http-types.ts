import { RpcError } from '../errors';
import type { BytesInput } from '../wire/bytes';
import { ErrorCodes } from '../wire/jsonrpc';
import type { HttpHeader, HttpRedirectPolicy } from '../wire/http';

/** An HTTP(S) request the executor makes for us (docs/protocol.md#http-requests). */
export interface HttpRequest {
  /** The HTTP method, e.g. `GET`. */
  readonly method: string;
  /** An `http:` or `https:` URL (another scheme → RpcError -32602). */
  readonly url: string;
  /** Request headers; `valueEnvVar` appends that executor env var's value to `value`. */
  readonly headers?: readonly HttpHeader[];
  /** The request body (a string is sent as UTF-8); null or absent: none. */
  readonly body?: BytesInput | null;
  /** The executor's timeout for the HTTP exchange; null or absent: none. */
  readonly timeoutMs?: number | null;
  /** Whether redirects are followed. @default executor's default */
  readonly redirectPolicy?: HttpRedirectPolicy;
  /**
   * The wire `requestId` (unique per connection until the final body delta).
   * @default the client's generator (ExecHttpClientOptions.newRequestId)
   */
  readonly requestId?: string;
}

/** A buffered response. */
export interface HttpResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** The response headers, in the order received. */
  readonly headers: HttpHeader[];
  /** The whole body. */
  readonly body: Buffer;
}

/** What a streamed response emits: the head once, then body pieces in order. */
export type HttpEvent =
  | {
      /** The status line and headers: the first event. */
      readonly type: 'head';
      /** The HTTP status code. */
      readonly status: number;
      /** The response headers. */
      readonly headers: HttpHeader[];
    }
  | {
      /** A piece of the body, in order. */
      readonly type: 'body';
      /** The bytes. */
      readonly chunk: Buffer;
    };

/**
 * The executor reported that a streamed body failed (a `http/request/bodyDelta` with a non-null
 * `error`). An RpcError with code -32603 and method `http/request`, as the buffered form of the same
 * failure (`-32603 http/request failed: …`), so callers handle both alike.
 */
export class HttpBodyError extends RpcError {
  constructor(
    /** The wire `requestId` of the request whose body failed. */
    readonly requestId: string,
    /** The seq of the body delta that carried the error. */
    readonly seq: number,
    /** The executor's description of the failure. */
    readonly bodyError: string,
  ) {
    super('http/request', ErrorCodes.InternalError, `http/request ${requestId} body failed at delta ${seq}: ${bodyError}`);
  }
}
