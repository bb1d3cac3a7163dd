/**
 * `HostClient.http(environmentId)`: HTTP from inside one environment through the host (issue 42): `fetch`,
 * a standard fetch whose requests the environment makes (an MCP client or any HTTP client that takes a
 * fetch can use it), and the previews' links and sharing levels. The host must run with `--allow-http`
 * (else 403 `HTTP_DISABLED`); every target goes through its allow list.
 */
import { decodeBase64, encodeBase64 } from './base64';
import type { ClientLifetime } from './client-lifetime';
import { HostApiError } from './host-api-error';
import type { HostConnection } from './host-connection';
import { errorOf, init as requestInit, send, TokenError, unreachable } from './host-connection';
import { decoded } from './host-answers';
import type { AbortOptions } from '../wire/shared-types';
import { decodeWith } from '../wire/decode';
import { API_PREFIX } from '../wire/operator-api';
import type { FetchEnvelope, FetchRedirect } from '../wire/http-api';
import type { PreviewLink, PreviewList, PreviewSharing } from './http-types';
import { FETCH_HEADERS_HEADER, FETCH_REDIRECTED_HEADER, FETCH_STATUS_HEADER, FETCH_URL_HEADER } from '../wire/http-api';
import { PreviewLink as PreviewLinkCodec, PreviewList as PreviewListCodec } from '../wire/http-api';

const decodeLink = decodeWith(PreviewLinkCodec);
const decodeList = decodeWith(PreviewListCodec);

/** The largest request body sent through the fetch route (the host's own limit may be lower: 413). */
export const MAX_FETCH_BODY_BYTES = 11 * 1024 * 1024;

/** What {@link HostHttp.fetch} takes besides the standard fields: the environment's bound on the exchange. */
export interface HostFetchInit extends Omit<RequestInit, 'redirect'> {
  /** `follow` (each hop checked by the host's allow list), `manual` (the 3xx is the answer) or `error`. @default follow */
  readonly redirect?: FetchRedirect;
  /** The bound on the exchange, head and body (the host caps it). @default the host's (`--preview-timeout`) */
  readonly timeoutMs?: number;
}


/**
 * HTTP from inside one environment through the host (see the module's doc). Holds nothing open; its calls
 * and response bodies end with the client's `close()`.
 */
export class HostHttp {
  /** @internal Made by `HostClient.http`. */
  constructor(
    private readonly connection: HostConnection,
    private readonly lifetime: ClientLifetime,
    /** The environment. */
    readonly environmentId: string,
  ) {}

  /**
   * A standard `fetch` made from inside the environment: resolves with a `Response` (its status, headers
   * and `url` the target's; its body streamed as the target sends it, ending when the target's does). Not
   * retried (a request may act). Rejects with HostApiError: `HTTP_DISABLED` (403), `HTTP_TARGET_REFUSED`
   * (403: the allow list refused the url or a redirect's), `BODY_TOO_LARGE` (413), `PREVIEW_FAILED` (502:
   * the environment could not reach it), `PREVIEW_TIMEOUT` (504), `HOST_UNREACHABLE`; with the signal's
   * reason when `init.signal` aborts; with ClosedError once the client is closed. A body cut by the target,
   * the host or the signal errors the body stream. Bound to its object: pass `http.fetch` as it is.
   */
  readonly fetch = async (input: string | URL | Request, init: HostFetchInit = {}): Promise<Response> => {
    const tracked = this.lifetime.track(init.signal ?? undefined);
    const what = `fetch in environment ${this.environmentId}`;
    try {
      const envelope = await envelopeOf(input, init);
      const route = `${API_PREFIX}/environments/${encodeURIComponent(this.environmentId)}/fetch`;
      let answer: Response;
      try {
        const request = await requestInit(this.connection, { method: 'POST', body: envelope, signal: tracked.signal });
        answer = await this.connection.fetch(`${this.connection.urls.current}${route}`, request);
      } catch (error: unknown) {
        if (tracked.signal.aborted) throw tracked.signal.reason;
        if (error instanceof TokenError) throw error.cause;
        throw unreachable(what, error);
      }
      if (!answer.ok) throw await errorOf(answer, what);
      return responseOf(answer, envelope, tracked.release, what);
    } catch (error: unknown) {
      tracked.release();
      throw error;
    }
  };

  /**
   * A signed link to the preview of `port` (the path form, and the host-name form when the host has a
   * preview domain), for whoever the caller gives it to, until `expiresAt`. Rejects with HostApiError
   * (`HTTP_DISABLED`, `FORBIDDEN_ROLE`: links need operate).
   */
  async previewLink(port: number, options: AbortOptions = {}): Promise<PreviewLink> {
    const answer = await this.lifetime.call(options.signal, (signal) => send(this.connection, { method: 'POST', path: `${this.base()}/${port}/links`, signal, retry: 'unsafe' }));
    return decoded(answer, decodeLink, 'previewLink', 'a preview link');
  }

  /** Sets who may open `port`'s preview: `private` (tokens and links) or `public` (anyone, rate-limited). */
  async share(port: number, sharing: PreviewSharing, options: AbortOptions = {}): Promise<void> {
    await this.lifetime.call(options.signal, (signal) => send(this.connection, { method: 'PUT', path: `${this.base()}/${port}`, body: { sharing }, signal, retry: 'idempotent' }));
  }

  /** The ports an operator made public (the others are private). */
  async previews(options: AbortOptions = {}): Promise<PreviewList> {
    const answer = await this.lifetime.call(options.signal, (signal) => send(this.connection, { method: 'GET', path: this.base(), signal, retry: 'idempotent' }));
    return decoded(answer, decodeList, 'previews', 'a preview list');
  }

  private base(): string {
    return `${API_PREFIX}/environments/${encodeURIComponent(this.environmentId)}/previews`;
  }
}

/** The fetch route's envelope of a standard request (its body read whole, at most {@link MAX_FETCH_BODY_BYTES}). */
async function envelopeOf(input: string | URL | Request, init: HostFetchInit): Promise<FetchEnvelope> {
  const request = input instanceof Request ? input : undefined;
  const url = request?.url ?? String(input);
  const headers = new Headers(request?.headers);
  new Headers(init.headers).forEach((value, name) => headers.set(name, value));
  const pairs: [string, string][] = [];
  headers.forEach((value, name) => pairs.push([name, value]));
  const method = init.method ?? request?.method ?? 'GET';
  const body = init.body !== undefined ? init.body : request?.body === null || request === undefined ? null : await request.arrayBuffer();
  const bytes = body === null || body === undefined ? undefined : new Uint8Array(await new Response(body).arrayBuffer());
  if (bytes !== undefined && bytes.byteLength > MAX_FETCH_BODY_BYTES) {
    const message = `a fetch body of ${bytes.byteLength} bytes is over ${MAX_FETCH_BODY_BYTES} (one executor message carries it)`;
    throw new HostApiError('HTTP_REQUEST_TOO_LARGE', message, undefined, undefined);
  }
  if (bytes !== undefined && init.body !== undefined && !headers.has('content-type') && typeof init.body === 'string') pairs.push(['content-type', 'text/plain;charset=UTF-8']);
  return {
    url,
    method,
    headers: pairs,
    ...(bytes === undefined ? {} : { bodyBase64: encodeBase64(bytes) }),
    ...(init.redirect === undefined ? {} : { redirect: init.redirect }),
    ...(init.timeoutMs === undefined ? {} : { timeoutMs: init.timeoutMs }),
  };
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/** The target's answer from the host's: status and headers from the `exec-rx-fetch-*` headers, the body streamed (released from the client's lifetime once it ends). */
function responseOf(answer: Response, envelope: FetchEnvelope, release: () => void, what: string): Response {
  const status = Number(answer.headers.get(FETCH_STATUS_HEADER));
  const encoded = answer.headers.get(FETCH_HEADERS_HEADER) ?? '';
  const standard = encoded.replace(/-/g, '+').replace(/_/g, '/');
  const raw = decodeBase64(standard.padEnd(Math.ceil(standard.length / 4) * 4, '='));
  let pairs: unknown;
  try {
    pairs = raw === undefined ? undefined : JSON.parse(new TextDecoder().decode(raw));
  } catch {
    pairs = undefined;
  }
  if (!Number.isInteger(status) || status < 200 || status > 599 || !isPairs(pairs)) {
    release();
    throw new HostApiError('DECODE_FAILED', `${what}: the host's answer does not carry the target's status and headers`, answer.status, undefined);
  }
  const headers = new Headers();
  for (const [name, value] of pairs) headers.append(name, value);
  const source = answer.body;
  let body: ReadableStream<Uint8Array> | null = null;
  if (NULL_BODY.has(status) || envelope.method?.toUpperCase() === 'HEAD' || source === null) {
    void source?.cancel();
    release();
  } else {
    const reader = source.getReader();
    body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            release();
            controller.close();
          } else controller.enqueue(value);
        } catch (error: unknown) {
          release();
          controller.error(error);
        }
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
    });
  }
  const response = new Response(body, { status, headers });
  Object.defineProperty(response, 'url', { value: decodeURI(answer.headers.get(FETCH_URL_HEADER) ?? envelope.url) });
  Object.defineProperty(response, 'redirected', { value: answer.headers.get(FETCH_REDIRECTED_HEADER) === 'true' });
  return response;
}

const isPairs = (value: unknown): value is [string, string][] =>
  Array.isArray(value) && value.every((pair) => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && typeof pair[1] === 'string');

