import { STATUS_CODES } from 'node:http';
import { HttpTargetRefusedError, ProtocolError } from '../errors';
import type { CallOptions } from '../rpc/rpc-connection';
import type { HttpHeader } from '../wire/http';
import type { ExecFetchBody, ExecFetchHeaders, ExecFetchRedirect, FetchRequest } from './fetch-request';
import { bodyBytes, defaultContentType, normaliseMethod, requestHeaders } from './fetch-request';
import type { Hop, HopHead } from './fetch-hop';
import { startHop } from './fetch-hop';
import type { ExecHttpClient } from './http-client';
import { withoutHopByHop } from './http-headers';
import type { HttpTargetPolicy } from './target-policy';

export type { ExecFetchBody, ExecFetchHeaders, ExecFetchRedirect } from './fetch-request';

/** The default bound of a request body: 10 MiB. */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 10 * 1024 * 1024;
/** The hard cap of a request body, whatever the options say: 11 MiB (one executor message carries it, base64, under 16 MiB). */
export const MAX_REQUEST_BODY_BYTES = 11 * 1024 * 1024;
/** The default bound of a response body's unread bytes: 8 MiB. */
export const DEFAULT_FETCH_BUFFER_BYTES = 8 * 1024 * 1024;
/** Redirects followed at most (as fetch). */
const MAX_REDIRECTS = 20;
/** What the call waits beyond the request's own `timeoutMs` for the head. */
const CALL_MARGIN_MS = 5_000;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const NULL_BODY_STATUSES = new Set([204, 205, 304]);
/** Headers that describe a body: dropped when a redirect turns the request into a GET without one. */
const BODY_HEADERS = new Set(['content-type', 'content-encoding', 'content-language', 'content-location']);
/** Headers not carried to another origin on a redirect. */
const ORIGIN_HEADERS = new Set(['authorization', 'cookie', 'host']);

/** The `RequestInit` subset {@link execFetch} takes, plus the executor's `timeoutMs`. */
export interface ExecFetchInit {
  /** The method (the six standard ones are upper-cased, as fetch does). @default the Request's, else `GET` */
  readonly method?: string;
  /** Request headers; hop-by-hop ones and `content-length` are dropped, `host` is sent as given. @default the Request's */
  readonly headers?: ExecFetchHeaders;
  /** The body, read whole before anything is sent (bounded by `maxRequestBodyBytes`). @default the Request's, else none */
  readonly body?: ExecFetchBody | null;
  /** `follow` (by us, hop by hop, each `Location` checked by the policy), `manual` (the 3xx is the answer) or `error`. @default `follow` */
  readonly redirect?: ExecFetchRedirect;
  /** Stops listening: before the head the call rejects with its reason, after it the body stream errors with it. @default the Request's */
  readonly signal?: AbortSignal | null;
  /** The executor's timeout of each hop, the body included (the body ends with an error at it). @default none */
  readonly timeoutMs?: number;
}

/** What {@link execFetch} is bound by. */
export interface ExecFetchOptions {
  /** Which targets (and redirect targets) may be reached. */
  readonly policy: HttpTargetPolicy;
  /** A request body's bound, in bytes (at most {@link MAX_REQUEST_BODY_BYTES}: a larger value is taken as 11 MiB). @default 10485760 */
  readonly maxRequestBodyBytes?: number;
  /** A response body's unread bytes' bound. @default 8388608 */
  readonly bufferBytes?: number;
  /**
   * Called before each hop's `http/request` is sent; the function it resolves with is called once that
   * hop's head arrived or it failed (a host puts heads through a fair queue with it). @default none
   */
  readonly acquire?: () => Promise<() => void>;
}

/**
 * `fetch` made by the executor: resolves with a WHATWG `Response` once the final hop's head arrived
 * (status, headers without hop-by-hop ones, `url` and `redirected` as fetch sets them) whose body is a
 * bounded `ReadableStream` filled as the executor's deltas come; it closes at the body's end. Rejects with
 * HttpTargetRefusedError (the target or a redirect's, nothing sent to it), HttpRequestTooLargeError (nothing
 * sent), the RpcError of a failed request (-32603 `http/request failed: …`), RequestTimeoutError,
 * TransportClosedError, the signal's reason, or a TypeError as fetch does (a body with GET or HEAD, a
 * redirect with `redirect: 'error'`, more than 20 redirects). The body stream errors with HttpBodyError
 * (the executor's body failure, after the bytes before it), TransportClosedError, HttpBodyOverflowError
 * (more than `bufferBytes` unread) or the signal's reason. Cancelling the body, an abort or an error stops
 * listening; the executor cannot be stopped and reads on until the body ends, `timeoutMs` or its
 * connection closes.
 */
export async function execFetch(client: ExecHttpClient, input: string | URL | Request, init: ExecFetchInit, options: ExecFetchOptions): Promise<Response> {
  const given = input instanceof Request ? input : undefined;
  const signal = init.signal ?? given?.signal ?? undefined;
  if (signal?.aborted === true) throw signal.reason;
  let url = options.policy.check(input instanceof Request ? input.url : input);
  const rawBody = init.body !== undefined ? init.body : (given?.body ?? null);
  const method = normaliseMethod(init.method ?? given?.method);
  if ((method === 'GET' || method === 'HEAD') && rawBody !== null) throw new TypeError(`a ${method} request cannot have a body`);
  const limit = Math.min(options.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES, MAX_REQUEST_BODY_BYTES);
  const body = await bodyBytes(rawBody, limit);
  let request: FetchRequest = { method, headers: requestHeaders(init.headers ?? given?.headers, defaultContentType(rawBody)), body };
  const redirect = init.redirect ?? given?.redirect ?? 'follow';
  for (let redirects = 0; ; redirects += 1) {
    const { hop, head } = await sendHop(client, url, request, init, options, signal);
    const location = REDIRECT_STATUSES.has(head.status) ? headerValue(head.headers, 'location') : undefined;
    if (location === undefined || redirect === 'manual') return toResponse(hop, head, request.method, url, redirects > 0);
    void hop.body.stream.cancel();
    if (redirect === 'error') throw new TypeError(`${url.href} answered ${head.status} with a redirect, and redirect is 'error'`);
    if (redirects >= MAX_REDIRECTS) throw new TypeError(`more than ${MAX_REDIRECTS} redirects from ${url.href}`);
    const next = options.policy.check(resolveLocation(location, url));
    request = redirected(request, head.status, url, next);
    url = next;
  }
}

/** Sends one hop (through `acquire`, released at its head or failure) and waits for its head. */
async function sendHop(
  client: ExecHttpClient,
  url: URL,
  request: FetchRequest,
  init: ExecFetchInit,
  options: ExecFetchOptions,
  signal: AbortSignal | undefined,
): Promise<{ readonly hop: Hop; readonly head: HopHead }> {
  const release = await acquired(options.acquire, signal);
  try {
    if (signal?.aborted === true) throw signal.reason;
    const call: CallOptions = init.timeoutMs === undefined ? {} : { timeoutMs: init.timeoutMs + CALL_MARGIN_MS };
    const hop = startHop(
      client,
      {
        method: request.method,
        url: url.href,
        requestId: client.nextRequestId(),
        redirectPolicy: 'stop',
        ...(request.headers.length === 0 ? {} : { headers: request.headers }),
        ...(request.body === null ? {} : { body: request.body }),
        ...(init.timeoutMs === undefined ? {} : { timeoutMs: init.timeoutMs }),
      },
      call,
      options.bufferBytes ?? DEFAULT_FETCH_BUFFER_BYTES,
      signal,
    );
    return { hop, head: await hop.head };
  } finally {
    release();
  }
}

/** `acquire`'s release (once), or a no-op without one; an abort while waiting rejects and releases what comes later. */
function acquired(acquire: (() => Promise<() => void>) | undefined, signal: AbortSignal | undefined): Promise<() => void> {
  if (acquire === undefined) return Promise.resolve(() => undefined);
  const once = (release: () => void): (() => void) => {
    let done = false;
    return () => {
      if (!done) release();
      done = true;
    };
  };
  const pending = acquire().then(once);
  if (signal === undefined) return pending;
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      reject(signal.reason);
      pending.then((release) => release(), () => undefined);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => signal.removeEventListener('abort', onAbort);
    pending.then(
      (release) => (settle(), resolve(release)),
      (error: unknown) => (settle(), reject(error)),
    );
  });
}

/** The Response of the final hop: a null body for 204, 205, 304 and HEAD (listening stops), the bounded stream otherwise. */
function toResponse(hop: Hop, head: HopHead, method: string, url: URL, redirected: boolean): Response {
  if (head.status < 200 || head.status > 599) {
    void hop.body.stream.cancel();
    throw new ProtocolError(`http/request to ${url.host} answered status ${head.status}, which a Response cannot carry`);
  }
  const nullBody = NULL_BODY_STATUSES.has(head.status) || method === 'HEAD';
  if (nullBody) void hop.body.stream.cancel();
  const headers = new Headers();
  for (const { name, value } of withoutHopByHop(head.headers)) {
    try {
      headers.append(name, value);
    } catch {
      // A name or value `Headers` refuses (not a token, a control character) is left out.
    }
  }
  const response = new Response(nullBody ? null : hop.body.stream, { status: head.status, statusText: STATUS_CODES[head.status] ?? '', headers });
  Object.defineProperty(response, 'url', { value: url.href });
  Object.defineProperty(response, 'redirected', { value: redirected });
  return response;
}

function headerValue(headers: readonly HttpHeader[], name: string): string | undefined {
  return headers.find((header) => header.name.toLowerCase() === name)?.value;
}

function resolveLocation(location: string, base: URL): URL {
  try {
    return new URL(location, base);
  } catch {
    throw new HttpTargetRefusedError(location.slice(0, 100), 'malformed', `a redirect from ${base.host} to something that is not a URL`);
  }
}

/** The request a redirect makes (as fetch): 303, and 301/302 after POST, become a GET without body; another origin loses its credentials and Host. */
function redirected(request: FetchRequest, status: number, from: URL, to: URL): FetchRequest {
  const toGet = (status === 303 && request.method !== 'GET' && request.method !== 'HEAD') || ((status === 301 || status === 302) && request.method === 'POST');
  const crossOrigin = from.origin !== to.origin;
  const headers = request.headers.filter(({ name }) => !(toGet && BODY_HEADERS.has(name)) && !(crossOrigin && ORIGIN_HEADERS.has(name)));
  return toGet ? { method: 'GET', headers, body: null } : { ...request, headers };
}
