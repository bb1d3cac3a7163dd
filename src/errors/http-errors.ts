/** Errors of HTTP made from inside an environment (`Environment.fetch`, previews): refused targets, bodies too big. */
import { ExecClientError } from './exec-client-error';

/**
 * Why a target was refused: `malformed`, not a URL the WHATWG parser takes; `scheme`, not `http:` or
 * `https:`; `credentials`, a URL with a user name or password (as `fetch` refuses them); `link-local`, an
 * address in 169.254.0.0/16 or fe80::/10 not named exactly; `metadata`, a cloud metadata address or name
 * not named exactly; `not-allowed`, a host the allow list does not name.
 */
export type HttpTargetRefusal = 'malformed' | 'scheme' | 'credentials' | 'link-local' | 'metadata' | 'not-allowed';

/**
 * A request's target (or a redirect's `Location`) is not one the allow list lets the environment reach.
 * Nothing was sent to it. The message names the normalised host (`127.1` is said as `127.0.0.1`), never a
 * query, a path or credentials.
 */
export class HttpTargetRefusedError extends ExecClientError {
  readonly code = 'HTTP_TARGET_REFUSED';
  constructor(
    /** The target's host as the WHATWG parser normalised it (or the raw input when it did not parse, cut to 100 characters). */
    readonly target: string,
    /** Why. */
    readonly reason: HttpTargetRefusal,
    detail: string,
  ) {
    super(`http target ${target} refused (${reason}): ${detail}`);
  }
}

/**
 * A streamed response body came faster than its reader took it, past the stream's bounded buffer: the
 * executor cannot be paused for one request (that would stall every process on its connection), so the
 * stream ends with this error instead of growing without bound. What was read before stays read.
 */
export class HttpBodyOverflowError extends ExecClientError {
  readonly code = 'HTTP_BODY_OVERFLOW';
  constructor(
    /** The wire `requestId` of the request. */
    readonly requestId: string,
    /** The buffer's bound, in bytes. */
    readonly limitBytes: number,
  ) {
    super(`http/request ${requestId}: the reader fell more than ${limitBytes} bytes behind the response body`);
  }
}

/**
 * A request body is larger than one executor message can carry (the whole body goes in one `http/request`,
 * base64: 16 MiB on the wire is about 11.9 MiB of body) or than the caller's own bound. Nothing was sent.
 */
export class HttpRequestTooLargeError extends ExecClientError {
  readonly code = 'HTTP_REQUEST_TOO_LARGE';
  constructor(
    /** The body's size, or how much was read before the bound was passed. */
    readonly bytes: number,
    /** The bound. */
    readonly limitBytes: number,
  ) {
    super(`http request body of ${bytes} bytes or more is over the ${limitBytes}-byte limit`);
  }
}
