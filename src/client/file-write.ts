/**
 * `HostFiles.write`: a file's new bytes as the body of one `PUT …/files/content`, from a web stream, an
 * async iterable, a Blob, bytes or a string, with progress counted as the body is pulled by fetch (what
 * went out, or into fetch's own small buffer: not what the executor wrote, which the answer says).
 */
import * as E from 'fp-ts/lib/Either';
import { offlineBound } from './file-request';
import { decoded } from './host-answers';
import { HostApiError } from './host-api-error';
import type { HostConnection } from './host-connection';
import { errorOf, init, isBusy, TokenError } from './host-connection';
import { UrlWalk } from './host-urls';
import { xhrAvailable, xhrFetch } from './xhr-upload';
import { abortReason, backoffDelay, retryAfterMs, sleep } from './retry';
import { decodeWith, parseJson } from '../wire/decode';
import type { FileEntry } from './file-types';
import { FileEntry as FileEntryCodec } from '../wire/files-api';
import { HOST_INSTANCE_HEADER } from '../wire/operator-api';

const decodeEntry = decodeWith(FileEntryCodec);

/** What `HostFiles.write` takes: bytes, a string (written as UTF-8), a Blob, or a stream of bytes. */
export type FileData = ReadableStream<Uint8Array> | Blob | Uint8Array | string | AsyncIterable<Uint8Array>;

/** Options of `HostFiles.write`. */
export interface FileWriteOptions {
  /** `'*'`: create the file only; the host answers 412 `PRECONDITION_FAILED` when it exists. */
  readonly ifNoneMatch?: '*';
  /** Replace the file only while its ETag (a `FileEntry.etag`) is this one; else 412 `PRECONDITION_FAILED`. */
  readonly ifMatch?: string;
  /**
   * Called as the body is pulled, with the bytes handed to fetch so far and the total when known (a
   * Blob's, bytes', a string's; not a stream's). With it, data of a known size is streamed too (see
   * {@link FileWriteOptions}); the last call has every byte.
   */
  readonly onProgress?: (bytesSent: number, total: number | undefined) => void;
  /** Aborts the upload: the call rejects with `signal.reason`; the host removes what it wrote. */
  readonly signal?: AbortSignal;
}

/** A request body and what is known of it. */
export interface UploadBody {
  /** What fetch sends. */
  readonly body: ReadableStream<Uint8Array> | Blob | Uint8Array<ArrayBuffer>;
  /** Whether it is a stream (fetch then needs `duplex: 'half'`, and the request cannot be sent twice). */
  readonly streamed: boolean;
  readonly total: number | undefined;
}

/** Slices of known-size data streamed for progress. */
const SLICE_BYTES = 64 * 1024;

/**
 * The body of `data`: bytes, a string and a Blob as they are (fetch sends them with a Content-Length,
 * and may send them again after a busy answer) unless `onProgress` wants them counted, then as a pulled
 * stream of 64 KiB slices; streams and async iterables as a pulled stream, counted as pulled.
 */
export function uploadBody(data: FileData, onProgress: FileWriteOptions['onProgress'], byXhr = false): UploadBody {
  const known = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  if (known instanceof Uint8Array || isBlob(known)) {
    const total = known instanceof Uint8Array ? known.byteLength : known.size;
    // In a browser, progress comes from XMLHttpRequest's upload events (./xhr-upload): sent whole.
    if (onProgress === undefined || byXhr) return { body: known instanceof Uint8Array ? onArrayBuffer(known) : known, streamed: false, total };
    return { body: counted(sliced(known), total, onProgress), streamed: true, total };
  }
  const stream = isReadableStream(known) ? known : fromIterable(known);
  return { body: onProgress === undefined ? stream : counted(stream, undefined, onProgress), streamed: true, total: undefined };
}

/** The same bytes over an ArrayBuffer (what fetch takes): a view of the same memory, or a copy of a shared one. */
function onArrayBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes);
}

/** A Blob, from this realm or another (checked by shape). */
function isBlob(value: unknown): value is Blob {
  return typeof Blob !== 'undefined' && value instanceof Blob;
}

function isReadableStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof value === 'object' && value !== null && 'getReader' in value && typeof value.getReader === 'function';
}

/** Known-size data as a stream of slices, each read only when pulled. */
function sliced(data: Uint8Array | Blob): ReadableStream<Uint8Array> {
  let offset = 0;
  const size = data instanceof Uint8Array ? data.byteLength : data.size;
  return new ReadableStream<Uint8Array>(
    {
      pull: async (controller) => {
        if (offset >= size) return controller.close();
        const end = Math.min(size, offset + SLICE_BYTES);
        const slice = data instanceof Uint8Array ? data.subarray(offset, end) : new Uint8Array(await data.slice(offset, end).arrayBuffer());
        offset = end;
        controller.enqueue(slice);
      },
    },
    { highWaterMark: 0 },
  );
}

/** An async iterable as a pulled stream: the next item is asked for only when fetch pulls; a cancel returns the iterator. */
function fromIterable(iterable: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = iterable[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      pull: async (controller) => {
        const next = await iterator.next();
        if (next.done === true) controller.close();
        else if (!(next.value instanceof Uint8Array)) controller.error(new TypeError('write: the iterable yielded something else than a Uint8Array'));
        else controller.enqueue(next.value);
      },
      cancel: async () => {
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/** `source` counted as it is pulled: `onProgress` after each chunk handed on. */
function counted(source: ReadableStream<Uint8Array>, total: number | undefined, onProgress: (bytes: number, total: number | undefined) => void): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let sent = 0;
  return new ReadableStream<Uint8Array>(
    {
      start: () => onProgress(0, total),
      pull: async (controller) => {
        const next = await reader.read();
        if (next.done) return controller.close();
        sent += next.value.byteLength;
        controller.enqueue(next.value);
        onProgress(sent, total);
      },
      cancel: (reason: unknown) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** The message of an upload that failed without an answer (the body cannot be sent twice). */
export function uploadLost(what: string, cause: unknown): HostApiError {
  const reason = cause instanceof Error ? cause.message : 'no answer';
  const message = `${what}: the upload was cut (${reason}): a streamed body cannot be sent again; the host keeps no half file`;
  return new HostApiError('HOST_UNREACHABLE', message, undefined, undefined, { cause });
}

/**
 * PUTs `data` to `route` (`…/files/content?path=…`) and resolves with the file's entry; sent again only
 * for a body that can be (not a stream) after a busy answer, or after no answer at all when acting twice
 * is the same (not a create-only). Rejects as `HostFiles.write` says.
 */
export async function putFile(
  connection: HostConnection,
  route: string,
  data: FileData,
  options: FileWriteOptions,
  signal: AbortSignal,
  what: string,
): Promise<FileEntry> {
  const upload = uploadBody(data, options.onProgress, xhrAvailable());
  const onProgress = options.onProgress;
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
  if (options.ifNoneMatch !== undefined) headers['if-none-match'] = options.ifNoneMatch;
  if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
  const offline = offlineBound(connection, what);
  const walk = new UrlWalk(connection.urls);
  let failures = 0;
  for (;;) {
    if (signal.aborted) throw abortReason(signal);
    const url = walk.url;
    let response: Response | undefined;
    let cause: unknown;
    try {
      const request: RequestInit & { duplex?: 'half' } = { ...(await init(connection, { method: 'PUT', headers, signal })), body: upload.body };
      if (upload.streamed) request.duplex = 'half';
      response =
        onProgress !== undefined && !upload.streamed && !(upload.body instanceof ReadableStream)
          ? await xhrFetch(`${url}${route}`, request, upload.body, upload.total ?? 0, onProgress)
          : await connection.fetch(`${url}${route}`, request);
    } catch (error: unknown) {
      if (signal.aborted) throw abortReason(signal);
      if (error instanceof TokenError) throw error.cause;
      cause = error;
    }
    if (response?.ok === true) return written(response, what, signal);
    // Sent again only when it can be (not a stream) and the host surely did not act on it, or (no
    // answer at all) when acting twice is the same (a plain replace, not a create-only).
    const again = !upload.streamed && (response !== undefined ? isBusy(response.status) : options.ifNoneMatch === undefined);
    if (!again) {
      if (response === undefined) throw uploadLost(what, cause);
      throw await errorOf(response, what);
    }
    const retryAfter = response === undefined ? undefined : retryAfterMs(response.headers.get('retry-after'), () => connection.scheduler.now());
    const busy = response === undefined ? cause : await errorOf(response, what);
    const delay = retryAfter ?? backoffDelay(failures, connection.policy, connection.random);
    failures += 1;
    const untried = walk.failed(url);
    const wait = offline.next(untried && retryAfter === undefined ? 0 : delay, busy);
    if (wait > 0) await sleep(wait, signal, connection.scheduler);
  }
}

/** A 200/201 to the PUT: the file's entry. */
async function written(response: Response, what: string, signal: AbortSignal): Promise<FileEntry> {
  let text: string;
  try {
    text = await response.text();
  } catch (error: unknown) {
    if (signal.aborted) throw abortReason(signal);
    throw uploadLost(what, error);
  }
  const hostInstance = response.headers.get(HOST_INSTANCE_HEADER) ?? undefined;
  const parsed = parseJson(text);
  if (E.isLeft(parsed)) throw new HostApiError('DECODE_FAILED', `${what}: the host answered ${response.status} with something else than JSON`, response.status, hostInstance);
  return decoded({ status: response.status, body: parsed.right, hostInstance }, decodeEntry, 'write', 'a file entry');
}
