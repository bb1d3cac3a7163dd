/**
 * `HostClient.files(environmentId)`: one environment's files through the host's file routes
 * (`/api/v1/environments/{id}/files`, issue 41): read and write streamed both ways with bounded memory,
 * a download resumed by Range after a lost connection, the directory calls, and the change stream.
 */
import * as E from 'fp-ts/lib/Either';
import type { Observable } from 'rxjs';
import type { ClientLifetime } from './client-lifetime';
import { checkRange, FileDownload } from './file-read';
import type { FileReadOptions } from './file-read';
import type { FileData, FileWriteOptions } from './file-write';
import { putFile } from './file-write';
import { decoded } from './host-answers';
import { HostApiError } from './host-api-error';
import type { ApiAnswer, ApiRequest, HostConnection } from './host-connection';
import { send } from './host-connection';
import { refusalOf, runSse, sse$ } from './sse-session';
import type { AbortOptions } from '../wire/shared-types';
import { decodeWith, parseJson } from '../wire/decode';
import { API_PREFIX, LogTicket } from '../wire/operator-api';
import type { FileChange, FileEntry, FileListing, FindResult } from './file-types';
import { FileChange as FileChangeCodec, FileEntry as FileEntryCodec, FileListing as FileListingCodec, FindResult as FindResultCodec } from '../wire/files-api';

const decodeEntry = decodeWith(FileEntryCodec);
const decodeListing = decodeWith(FileListingCodec);
const decodeFind = decodeWith(FindResultCodec);
const decodeChange = decodeWith(FileChangeCodec);
const decodeTicket = decodeWith(LogTicket);
/** The SSE event type of the change stream. */
const FILE_CHANGE_EVENT = 'change';

/** Options of {@link HostFiles.find}. */
export interface FindOptions extends AbortOptions {
  /** Only paths whose name matches this glob (`*.ts`). @default every path */
  readonly glob?: string;
  /** How deep to walk (1: the directory's own entries). @default the host's */
  readonly maxDepth?: number;
  /** Stop after this many entries (`truncated` then says so). @default the host's */
  readonly maxEntries?: number;
}

/** Options of {@link HostFiles.copy} and {@link HostFiles.move}. */
export interface TransferOptions extends AbortOptions {
  /** Replace what is at the destination. @default false: 409 when it exists */
  readonly overwrite?: boolean;
}

/** Options of {@link HostFiles.downloadUrl}. */
export interface DownloadUrlOptions extends AbortOptions {
  /** Ask the browser to show the file instead of saving it: honoured for `text/plain` and raster images only. @default false */
  readonly inline?: boolean;
}

/**
 * One environment's files on a host. Every path is absolute, on the executor (POSIX `/…`, or `C:\…` on a
 * Windows one); a path the host refuses is a HostApiError `INVALID_PATH` (400). The calls reject with
 * HostApiError carrying the host's code: `FILE_NOT_FOUND` (404), `IS_A_DIRECTORY` / `NOT_A_DIRECTORY` /
 * `DIRECTORY_NOT_EMPTY` (409), `FILE_FORBIDDEN` / `OUTSIDE_FILES_ROOT` (403), `PRECONDITION_FAILED` (412),
 * `RANGE_NOT_SATISFIABLE` (416), `BODY_TOO_LARGE` (413), `INSUFFICIENT_STORAGE` (507), `FILE_BUSY` /
 * `UPLOAD_INTERRUPTED` (503, retried as every busy answer is), `HOST_UNREACHABLE`; or with
 * `signal.reason` when aborted, and ClosedError once the client is closed. Made by `HostClient.files`;
 * it holds nothing open between calls.
 */
export class HostFiles {
  /** @internal */
  constructor(
    private readonly connection: HostConnection,
    private readonly lifetime: ClientLifetime,
    /** The environment whose files these are. */
    readonly environmentId: string,
  ) {}

  /**
   * The bytes of the file at `path` (from `start`, up to `end` exclusive) as a pulled web stream: the
   * request goes out at the first read and the body is read no faster than the consumer reads. A lost
   * connection resumes the download where it stopped (`Range` with `If-Range`), calling `onResume` with
   * the offset; a file that changed meanwhile, or that the host cut because it changed while read,
   * errors the stream with HostApiError `FILE_CHANGED` (nothing of two versions is ever spliced).
   * The stream closes after the last byte; errors with HostApiError (`FILE_NOT_FOUND`,
   * `IS_A_DIRECTORY`, `FILE_CHANGED`, `HOST_UNREACHABLE` when the host stayed unreachable past
   * `maxOfflineMs` …) or `signal.reason`. Cancelling it (or the client's close) ends the request.
   * Throws RangeError for a `start` or `end` that is not a whole number ≥ 0.
   */
  read(path: string, options: FileReadOptions = {}): ReadableStream<Uint8Array> {
    return this.download(path, options).stream();
  }

  /**
   * The bytes of {@link read} as an Observable: each chunk once, in order; completes after the last
   * byte; errors as `read` does. Cold: each subscription is one download; unsubscribing cancels it.
   * No backpressure (a slow subscriber holds the difference): for that, use {@link read}.
   */
  read$(path: string, options: FileReadOptions = {}): Observable<Uint8Array> {
    return this.lifetime.observe(
      sse$<Uint8Array>(async (emit, stop) => {
        const signal = options.signal === undefined ? stop : AbortSignal.any([stop, options.signal]);
        const reader = this.read(path, { ...options, signal }).getReader();
        try {
          for (;;) {
            const next = await reader.read();
            if (next.done) return;
            emit(next.value);
          }
        } finally {
          await reader.cancel().catch(() => undefined);
        }
      }),
    );
  }

  /** The whole file (or its `start`…`end` part) in memory; rejects as {@link read} errors. For small files. */
  async readAll(path: string, options: FileReadOptions = {}): Promise<Uint8Array> {
    const reader = this.read(path, options).getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      chunks.push(next.value);
      size += next.value.byteLength;
    }
    const all = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      all.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return all;
  }

  /** {@link readAll} decoded as UTF-8 (a malformed sequence as U+FFFD). */
  async readText(path: string, options: FileReadOptions = {}): Promise<string> {
    return new TextDecoder().decode(await this.readAll(path, options));
  }

  /**
   * Writes `data` to the file at `path`, created or replaced whole (the host writes beside it and moves
   * it into place: a cut upload leaves the old file). Streams and async iterables are sent as a stream
   * (pulled only as fast as the connection takes it; fetch needs `duplex: 'half'`, which this sets, and
   * a browser's fetch sends one only over HTTP/2), bytes, strings and Blobs as they are, or as a stream
   * of 64 KiB slices when `onProgress` is given (to count them as they are pulled). Resolves with the
   * file's entry as the host wrote it. Rejects with HostApiError (`PRECONDITION_FAILED` for
   * `ifNoneMatch`/`ifMatch`, `BODY_TOO_LARGE`, `INSUFFICIENT_STORAGE`, `UPLOAD_INTERRUPTED`,
   * `HOST_UNREACHABLE` …) or `signal.reason`. A busy answer (429, 503) is retried for data that can be
   * sent again (not a stream); a lost connection fails a streamed upload at once (`HOST_UNREACHABLE`).
   */
  write(path: string, data: FileData, options: FileWriteOptions = {}): Promise<FileEntry> {
    const what = `PUT ${this.base}/content`;
    return this.lifetime.call(options.signal, (signal) => putFile(this.connection, this.route('content', path), data, options, signal, what));
  }

  /** The entry of `path` (a file, a directory, another kind): rejects `FILE_NOT_FOUND` when there is none. */
  async stat(path: string, options: AbortOptions = {}): Promise<FileEntry> {
    return decoded(await this.call(options, { method: 'GET', path: this.route('metadata', path), retry: 'idempotent' }), decodeEntry, 'stat', 'a file entry');
  }

  /** The entries of the directory `path`, sorted by name (`truncated` when the host listed only part); `NOT_A_DIRECTORY` for a file. */
  async list(path: string, options: AbortOptions = {}): Promise<FileListing> {
    return decoded(await this.call(options, { method: 'GET', path: this.route('entries', path), retry: 'idempotent' }), decodeListing, 'list', 'a listing');
  }

  /** Every path under the directory `path` (a walk within the host's limits), filtered by `glob`; `truncated` when a limit was reached. */
  async find(path: string, options: FindOptions = {}): Promise<FindResult> {
    const query = new URLSearchParams({ path });
    if (options.glob !== undefined) query.set('glob', options.glob);
    if (options.maxDepth !== undefined) query.set('maxDepth', String(options.maxDepth));
    if (options.maxEntries !== undefined) query.set('maxEntries', String(options.maxEntries));
    return decoded(await this.call(options, { method: 'GET', path: `${this.base}/find?${query.toString()}`, retry: 'idempotent' }), decodeFind, 'find', 'a walk');
  }

  /** Makes the directory `path` (with its missing parents when `parents`; then one that exists is no error). Resolves with its entry. */
  async mkdir(path: string, options: AbortOptions & { readonly parents?: boolean } = {}): Promise<FileEntry> {
    const parents = options.parents ?? false;
    const answer = await this.call(options, { method: 'POST', path: `${this.base}/directories`, body: { path, parents }, retry: parents ? 'idempotent' : 'unsafe' });
    return decoded(answer, decodeEntry, 'mkdir', 'a file entry');
  }

  /** Removes the file or directory `path` (a non-empty directory only with `recursive`, else `DIRECTORY_NOT_EMPTY`); `FILE_NOT_FOUND` when there is none. */
  async remove(path: string, options: AbortOptions & { readonly recursive?: boolean } = {}): Promise<void> {
    const query = new URLSearchParams({ path });
    if (options.recursive === true) query.set('recursive', 'true');
    await this.call(options, { method: 'DELETE', path: `${this.base}?${query.toString()}`, retry: 'unsafe' });
  }

  /** Copies `source` to `destination` on the executor (a directory with what is under it). Resolves with the destination's entry. */
  async copy(source: string, destination: string, options: TransferOptions = {}): Promise<FileEntry> {
    return this.transfer('copy', source, destination, options, options.overwrite === true ? 'idempotent' : 'unsafe');
  }

  /** Moves `source` to `destination` on the executor. Resolves with the destination's entry. Not sent again after an unclear failure. */
  async move(source: string, destination: string, options: TransferOptions = {}): Promise<FileEntry> {
    return this.transfer('move', source, destination, options, 'unsafe');
  }

  /**
   * What changes under the directory `path`: one FileChange per entry created, changed or removed (the
   * host polls and diffs). Never completes by itself; a dropped stream is opened again (a change made
   * while it was down is not reported: list the directory again after a gap); errors with HostApiError
   * (`FILE_NOT_FOUND`, `NOT_A_DIRECTORY`, `HOST_UNREACHABLE` past `maxOfflineMs` …). Cold;
   * unsubscribing closes the stream.
   *
   * `onOpen` is called each time the stream opens (the first time and after each reopening): the host
   * takes the directory as it is then as the point changes are reported from, so a listing asked for
   * after `onOpen` misses nothing (a file browser lists on each open, and applies the changes after).
   */
  changes$(path: string, options: { readonly onOpen?: () => void } = {}): Observable<FileChange> {
    const what = `GET ${this.base}/changes`;
    const route = this.route('changes', path);
    return this.lifetime.observe(
      sse$<FileChange>((emit, signal) => {
        let seen = 0;
        return runSse(
          this.connection,
          what,
          {
            path: () => route,
            onOpen: () => options.onOpen?.(),
            onMessage: (message) => {
              if (message.event !== FILE_CHANGE_EVENT) return;
              const parsed = parseJson(message.data);
              const change = E.isRight(parsed) ? decodeChange(parsed.right) : parsed;
              if (E.isLeft(change)) throw new HostApiError('DECODE_FAILED', `${what}: a change event: ${change.left.message}`, undefined, undefined);
              seen += 1;
              emit(change.right);
            },
            onEnd: () => undefined,
            finished: () => false,
            progress: () => seen,
            refusal: refusalOf(what),
          },
          signal,
        );
      }),
    );
  }

  /**
   * An absolute url that downloads the file without a token (`…/files/content?ticket=T`), for a browser to
   * navigate to: saved as an attachment, or shown with `inline` (text and raster images only). The
   * ticket is good once, for a short time, for this file only. Rejects as {@link stat} does.
   */
  async downloadUrl(path: string, options: DownloadUrlOptions = {}): Promise<string> {
    const answer = await this.call(options, { method: 'POST', path: this.route('content/tickets', path), retry: 'idempotent' });
    const ticket = decoded(answer, decodeTicket, 'downloadUrl', 'a ticket');
    const url = new URL(ticket.url, `${answer.baseUrl ?? this.connection.urls.current}/`);
    if (options.inline === true) url.searchParams.set('disposition', 'inline');
    return url.toString();
  }

  /** The environment's file routes' base path. */
  private get base(): string {
    return `${API_PREFIX}/environments/${encodeURIComponent(this.environmentId)}/files`;
  }

  /** `B/<route>?path=<path>`. */
  private route(route: string, path: string): string {
    return `${this.base}/${route}?${new URLSearchParams({ path }).toString()}`;
  }

  private download(path: string, options: FileReadOptions): FileDownload {
    const { start, end } = checkRange(options);
    const tracked = this.lifetime.track(options.signal);
    return new FileDownload(this.connection, this.route('content', path), `GET ${this.base}/content`, start, end, tracked.signal, options.onResume, tracked.release);
  }

  private transfer(kind: 'copy' | 'move', source: string, destination: string, options: TransferOptions, retry: ApiRequest['retry']): Promise<FileEntry> {
    const body = { source, destination, overwrite: options.overwrite ?? false };
    return this.call(options, { method: 'POST', path: `${this.base}/${kind}`, body, retry }).then((answer) => decoded(answer, decodeEntry, kind, 'a file entry'));
  }

  private call(options: AbortOptions, request: Omit<ApiRequest, 'signal'>): Promise<ApiAnswer> {
    return this.lifetime.call(options.signal, (signal) => send(this.connection, { ...request, signal }));
  }
}
