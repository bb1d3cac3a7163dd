import * as t from 'io-ts';
import { Base64Bytes } from './base64';
import { Integer, NonNegativeInteger } from './integer';
import { struct } from './struct';

// Codecs whose types the main entry exports: see the note in `./environment`.

/** An HTTP header. On a request, `valueEnvVar` appends the value of that executor env var to `value`. @hidden */
export const HttpHeader = struct(
  'HttpHeader',
  {
    /** The header's name. */
    name: t.string,
    /** The header's value (on a request, `valueEnvVar`'s value is appended to it). */
    value: t.string,
  },
  {
    /** Request only: append the value of this environment variable of the executor to `value`. */
    valueEnvVar: t.string,
  },
);
/**
 * An HTTP header of a request or a response. On a request, `valueEnvVar` makes the executor append the
 * value of one of its environment variables (a secret the host never sees; needs the executor's
 * `capabilities.httpHeaderEnvVars`).
 * @interface
 */
export type HttpHeader = t.TypeOf<typeof HttpHeader>;

/** `http/request` `redirectPolicy`. @hidden */
export const HttpRedirectPolicy = t.keyof({ follow: null, stop: null }, 'HttpRedirectPolicy');
/**
 * Whether the executor follows redirects (`follow`) or returns the redirect response (`stop`).
 * @useDeclaredType
 */
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
