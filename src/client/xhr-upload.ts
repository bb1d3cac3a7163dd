/**
 * `HostFiles.write` with `onProgress` in a browser: the PUT goes by XMLHttpRequest, whose `upload`
 * progress events count the bytes that went out. A browser's fetch can do neither: it reports no upload
 * progress, and it sends a streamed request body only over HTTP/2 or QUIC (Chromium fails it with
 * `ERR_H2_OR_QUIC_REQUIRED` over HTTP/1.1, which is what `exec-rx host` speaks), so counting a sliced
 * stream as fetch pulls it, as Node does, cannot work there. The answer comes back as a `Response`, so
 * the caller reads it as it reads fetch's. A custom `fetch` option is not used for these uploads.
 */

/** The part of XMLHttpRequest used here (the client's tsconfig has no DOM library: Node has none). */
interface Xhr {
  open(method: string, url: string): void;
  responseType: string;
  setRequestHeader(name: string, value: string): void;
  readonly upload: { addEventListener(type: 'progress', listener: (event: { readonly loaded: number }) => void): void };
  addEventListener(type: 'load' | 'error' | 'abort', listener: () => void): void;
  readonly status: number;
  readonly statusText: string;
  readonly response: unknown;
  getAllResponseHeaders(): string;
  abort(): void;
  send(body: Blob | Uint8Array<ArrayBuffer>): void;
}

/** This realm's XMLHttpRequest, if it has one. */
function xhrConstructor(): (new () => Xhr) | undefined {
  const found: unknown = (globalThis as { readonly XMLHttpRequest?: unknown }).XMLHttpRequest;
  return typeof found === 'function' ? (found as new () => Xhr) : undefined;
}

/** Whether uploads with progress go by XMLHttpRequest here (a browser, or a worker that has it). */
export const xhrAvailable = (): boolean => xhrConstructor() !== undefined;

/** The body XMLHttpRequest sends: data of a known size. */
export type XhrBody = Blob | Uint8Array<ArrayBuffer>;

/**
 * Sends `init` (method, headers, signal) with `body` to `url` by XMLHttpRequest, calling `onProgress`
 * with the bytes sent so far (and the total) as they go out; resolves with the answer as a Response,
 * rejects with a TypeError when there was none (as fetch does) or `signal.reason` when aborted.
 */
export function xhrFetch(url: string, init: RequestInit, body: XhrBody, total: number, onProgress: (bytes: number, total: number) => void): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const signal = init.signal ?? undefined;
    if (signal?.aborted === true) return reject(signal.reason);
    const Constructor = xhrConstructor();
    if (Constructor === undefined) return reject(new TypeError('no XMLHttpRequest here'));
    const xhr = new Constructor();
    xhr.open(init.method ?? 'PUT', url);
    xhr.responseType = 'arraybuffer';
    for (const [name, value] of new Headers(init.headers).entries()) xhr.setRequestHeader(name, value);
    const onAbort = (): void => xhr.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => signal?.removeEventListener('abort', onAbort);
    onProgress(0, total);
    xhr.upload.addEventListener('progress', (event) => onProgress(event.loaded, total));
    xhr.addEventListener('load', () => {
      settle();
      const headers = new Headers();
      for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
        const at = line.indexOf(':');
        if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
      }
      // A Response cannot carry a body with these statuses.
      const empty = xhr.status === 204 || xhr.status === 205 || xhr.status === 304;
      const answer: unknown = xhr.response;
      resolve(new Response(empty || !(answer instanceof ArrayBuffer) ? null : answer, { status: xhr.status, statusText: xhr.statusText, headers }));
    });
    xhr.addEventListener('error', () => {
      settle();
      reject(new TypeError(`${init.method ?? 'PUT'} ${url}: the request failed (no answer)`));
    });
    xhr.addEventListener('abort', () => {
      settle();
      reject(signal?.reason ?? new TypeError(`${init.method ?? 'PUT'} ${url}: aborted`));
    });
    xhr.send(body);
  });
}
