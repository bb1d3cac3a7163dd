import { HttpRequestTooLargeError } from '../errors';
import type { HttpHeader } from '../wire/http';
import { withoutHopByHop } from './http-headers';

/** What `Environment.fetch` takes as a request body: read whole (bounded) before anything is sent. */
export type ExecFetchBody = string | ArrayBuffer | ArrayBufferView | Blob | URLSearchParams | ReadableStream<Uint8Array>;

/** Request headers as `Environment.fetch` takes them (what `new Headers(…)` takes). */
export type ExecFetchHeaders = Headers | [string, string][] | Record<string, string>;

/** How redirects are handled: `follow` (by us, hop by hop, each target checked), `manual` (the 3xx is the answer), `error` (a 3xx rejects). */
export type ExecFetchRedirect = 'follow' | 'manual' | 'error';

/** One request as the redirect loop sends it: method, headers (no hop-by-hop), body bytes. */
export interface FetchRequest {
  readonly method: string;
  readonly headers: HttpHeader[];
  readonly body: Uint8Array | null;
}

/** The methods fetch upper-cases (the Fetch standard's "normalize a method"). */
const NORMALISED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);

/** The method as fetch normalises it: the six standard ones upper-cased, others as given. */
export function normaliseMethod(method: string | undefined): string {
  const upper = (method ?? 'GET').toUpperCase();
  return NORMALISED_METHODS.has(upper) ? upper : (method ?? 'GET');
}

/**
 * The headers to send: the caller's (lowercase names, in `Headers` order) without hop-by-hop ones and
 * without `content-length` (the executor sets it from the body); `Host` is kept and passed on verbatim.
 * `contentType` is added when the caller gave none.
 */
export function requestHeaders(init: ExecFetchHeaders | undefined, contentType: string | undefined): HttpHeader[] {
  const headers = new Headers(init);
  if (contentType !== undefined && !headers.has('content-type')) headers.set('content-type', contentType);
  const list: HttpHeader[] = [];
  headers.forEach((value, name) => {
    if (name !== 'content-length') list.push({ name, value });
  });
  return withoutHopByHop(list);
}

/** The content type fetch gives a body of this kind when the caller gave none. */
export function defaultContentType(body: ExecFetchBody | null | undefined): string | undefined {
  if (typeof body === 'string') return 'text/plain;charset=UTF-8';
  if (body instanceof URLSearchParams) return 'application/x-www-form-urlencoded;charset=UTF-8';
  if (body instanceof Blob && body.type !== '') return body.type;
  return undefined;
}

/**
 * The body's bytes, read whole: rejects with HttpRequestTooLargeError once more than `limitBytes` are
 * known (a stream is cancelled there, read no further). `null` for no body.
 */
export async function bodyBytes(body: ExecFetchBody | null | undefined, limitBytes: number): Promise<Uint8Array | null> {
  if (body === null || body === undefined) return null;
  const bounded = (bytes: Uint8Array): Uint8Array => {
    if (bytes.byteLength > limitBytes) throw new HttpRequestTooLargeError(bytes.byteLength, limitBytes);
    return bytes;
  };
  if (typeof body === 'string' || body instanceof URLSearchParams) return bounded(Buffer.from(String(body), 'utf8'));
  if (body instanceof ArrayBuffer) return bounded(new Uint8Array(body));
  if (ArrayBuffer.isView(body)) return bounded(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
  if (body instanceof Blob) {
    if (body.size > limitBytes) throw new HttpRequestTooLargeError(body.size, limitBytes);
    return new Uint8Array(await body.arrayBuffer());
  }
  return readStream(body, limitBytes);
}

async function readStream(stream: ReadableStream<Uint8Array>, limitBytes: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limitBytes) {
        await reader.cancel().catch(() => undefined);
        throw new HttpRequestTooLargeError(total, limitBytes);
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks, total);
}
