import * as t from 'io-ts';
import { Base64Bytes } from './base64';
import { Integer, NonNegativeInteger } from './integer';
import { struct } from './struct';

/** An HTTP header. On a request, `valueEnvVar` appends the value of that executor env var to `value`. */
export const HttpHeader = struct('HttpHeader', { name: t.string, value: t.string }, { valueEnvVar: t.string });
/** An HTTP header. */
export type HttpHeader = t.TypeOf<typeof HttpHeader>;

/** `http/request` `redirectPolicy`. */
export const HttpRedirectPolicy = t.keyof({ follow: null, stop: null }, 'HttpRedirectPolicy');
/** `http/request` `redirectPolicy`. */
export type HttpRedirectPolicy = t.TypeOf<typeof HttpRedirectPolicy>;

/**
 * `http/request` params (docs/protocol.md#http-requests): an HTTP(S) request made by the executor.
 * `requestId` is ours, unique per connection until its final body delta; `timeoutMs` null or absent means
 * no timeout; `streamResponse` sends the body as `http/request/bodyDelta` notifications.
 */
export const HttpRequestParams = struct(
  'HttpRequestParams',
  { method: t.string, url: t.string, requestId: t.string },
  {
    headers: t.array(HttpHeader),
    bodyBase64: t.union([Base64Bytes, t.null]),
    timeoutMs: t.union([NonNegativeInteger, t.null]),
    redirectPolicy: HttpRedirectPolicy,
    streamResponse: t.boolean,
  },
);
/** `http/request` params. */
export type HttpRequestParams = t.TypeOf<typeof HttpRequestParams>;

/** `http/request` result; with `streamResponse` the body here is empty and the deltas follow. */
export const HttpRequestResponse = struct('HttpRequestResponse', { status: Integer, headers: t.array(HttpHeader), bodyBase64: Base64Bytes });
/** `http/request` result. */
export type HttpRequestResponse = t.TypeOf<typeof HttpRequestResponse>;

/**
 * `http/request/bodyDelta` params: part `seq` (1-based) of a streamed body. The last delta has
 * `done: true` or a non-null `error`.
 */
export const HttpBodyDeltaNotification = struct('HttpBodyDeltaNotification', {
  requestId: t.string,
  seq: NonNegativeInteger,
  deltaBase64: Base64Bytes,
  done: t.boolean,
  error: t.union([t.string, t.null]),
});
/** `http/request/bodyDelta` params. */
export type HttpBodyDeltaNotification = t.TypeOf<typeof HttpBodyDeltaNotification>;
