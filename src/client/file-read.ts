/**
 * `HostFiles.read`: a file's bytes from the host as a web ReadableStream, pulled (the body is read no
 * faster than the consumer takes it), and resumed where it stopped after a lost connection: the next
 * request asks for `Range: bytes=<offset>-` with `If-Range` (the first answer's `Last-Modified`, else its
 * ETag), so that a file that changed meanwhile is never spliced: the host then answers the whole file
 * (200), and the read fails `FILE_CHANGED`. A 206 whose ETag differs from the first answer's fails the
 * same way (a change within the second `Last-Modified` cannot show). A response the host cut because
 * the file changed while it was read (its end check) is resumed like any cut, and fails the same way.
 */
import { HostApiError } from './host-api-error';
import type { HostConnection } from './host-connection';
import type { OfflineBound } from './host-connection';
import { offlineBound, openRaw } from './file-request';
import { abortReason, backoffDelay, sleep } from './retry';

/** Options of `HostFiles.read` and `read$`. */
export interface FileReadOptions {
  /** The first byte to read (an offset from the file's start). @default 0 */
  readonly start?: number;
  /** Where to stop: the offset after the last byte to read (exclusive). @default the file's end */
  readonly end?: number;
  /** Called each time the read resumed after a lost connection, with the offset it resumed at. */
  readonly onResume?: (offset: number) => void;
  /** Aborts the read: the stream errors (the Observable errors) with `signal.reason`. */
  readonly signal?: AbortSignal;
}

/** The first answer's validators: what a resumed request must match. */
interface Validators {
  readonly etag: string | null;
  readonly lastModified: string | null;
}

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;

/** Checks a read's `start`/`end`: whole numbers ≥ 0. Throws RangeError. */
export function checkRange(options: FileReadOptions): { readonly start: number; readonly end: number | undefined } {
  const start = options.start ?? 0;
  const { end } = options;
  if (!Number.isSafeInteger(start) || start < 0) throw new RangeError(`read: start must be a whole number ≥ 0, not ${start}`);
  if (end !== undefined && (!Number.isSafeInteger(end) || end < 0)) throw new RangeError(`read: end must be a whole number ≥ 0, not ${end}`);
  return { start, end };
}

/**
 * One download: opens on the first pull, hands on each chunk as it is pulled, resumes after a cut, and
 * counts its resumes. `release` is called once when it ends (closed, errored or cancelled).
 */
export class FileDownload {
  /** How many times the read resumed after a lost connection. */
  resumes = 0;
  private position: number;
  private end: number | undefined;
  private validators: Validators | undefined;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private readonly offline: OfflineBound;
  /** Cuts in a row with no byte between them (their backoff). */
  private emptyCuts = 0;
  private released = false;
  /** The end the caller asked for (the Range's last byte); `end` is what the host announced. */
  private readonly wanted: number | undefined;

  constructor(
    private readonly connection: HostConnection,
    /** The content route's path and query (`…/files/content?path=…`). */
    private readonly route: string,
    private readonly what: string,
    start: number,
    end: number | undefined,
    private readonly signal: AbortSignal,
    private readonly onResume: ((offset: number) => void) | undefined,
    private readonly release: () => void,
  ) {
    this.position = start;
    this.end = end;
    this.wanted = end;
    this.offline = offlineBound(connection, what);
  }

  /** The download as a pulled stream (the request goes out at the first read). */
  stream(): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          try {
            const chunk = await this.next();
            if (chunk === undefined) {
              this.finish();
              controller.close();
            } else controller.enqueue(chunk);
          } catch (error: unknown) {
            this.finish();
            controller.error(error);
          }
        },
        cancel: async () => {
          this.finish();
          await this.reader?.cancel().catch(() => undefined);
        },
      },
      { highWaterMark: 0 },
    );
  }

  private finish(): void {
    if (this.released) return;
    this.released = true;
    this.release();
  }

  /** The next chunk; `undefined` at the end. */
  private async next(): Promise<Uint8Array | undefined> {
    for (;;) {
      if (this.end !== undefined && this.position >= this.end && this.reader === undefined) return undefined;
      const reader = this.reader ?? (await this.open());
      if (reader === undefined) return undefined;
      let result: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;
      try {
        result = await reader.read();
      } catch (error: unknown) {
        if (this.signal.aborted) throw abortReason(this.signal);
        await this.cut(error);
        continue;
      }
      if (result.done) {
        this.reader = undefined;
        if (this.end === undefined || this.position >= this.end) return undefined;
        // A body that ended before its announced length: a cut as well.
        await this.cut(new Error('the body ended early'));
        continue;
      }
      const chunk = result.value;
      if (this.end !== undefined && this.position + chunk.byteLength > this.end) {
        throw new HostApiError('DECODE_FAILED', `${this.what}: the host sent more bytes than it announced`, undefined, undefined);
      }
      this.position += chunk.byteLength;
      this.emptyCuts = 0;
      this.offline.reached();
      return chunk;
    }
  }

  /** The answer's body broke at `position`: forget it; past the first cut without progress, back off. */
  private async cut(cause: unknown): Promise<void> {
    await this.reader?.cancel().catch(() => undefined);
    this.reader = undefined;
    if (this.validators === undefined || (this.validators.etag === null && this.validators.lastModified === null)) {
      throw new HostApiError('HOST_UNREACHABLE', `${this.what}: the connection was lost and the host gave no validator to resume by`, undefined, undefined, { cause });
    }
    if (this.emptyCuts > 0) {
      const { policy, random, scheduler } = this.connection;
      await sleep(this.offline.next(backoffDelay(this.emptyCuts - 1, policy, random), cause), this.signal, scheduler);
    }
    this.emptyCuts += 1;
    if (this.end !== undefined && this.position >= this.end) await this.checkUnchanged(cause);
  }

  /**
   * Every byte came but the answer was cut at its end, as the host cuts one whose file changed while it
   * was read: the file's validator now (a HEAD) says which. Unchanged: the read is whole.
   */
  private async checkUnchanged(cause: unknown): Promise<void> {
    const response = await openRaw(this.connection, { method: 'HEAD', path: this.route, headers: {}, signal: this.signal }, this.what, this.offline);
    if (!this.matches(response)) throw this.changed('the answer was cut at its end and the file is no longer the one read', cause);
  }

  /** Whether an answer's validators are the first answer's (the ETag when both have one, else Last-Modified). */
  private matches(response: Response): boolean {
    const first = this.validators;
    if (first === undefined) return true;
    const etag = response.headers.get('etag');
    if (first.etag !== null && etag !== null) return first.etag === etag;
    const lastModified = response.headers.get('last-modified');
    return first.lastModified === null || lastModified === null || first.lastModified === lastModified;
  }

  private changed(why: string, cause?: unknown): HostApiError {
    const message = `${this.what}: the file changed while it was read (${why}): what was read is not one version of it`;
    return new HostApiError('FILE_CHANGED', message, undefined, undefined, cause === undefined ? undefined : { cause });
  }

  /** Opens the first request, or a resumed one from `position`; `undefined` when nothing is left to read. */
  private async open(): Promise<ReadableStreamDefaultReader<Uint8Array> | undefined> {
    const resuming = this.validators !== undefined;
    if (resuming && this.end !== undefined && this.position >= this.end) return undefined;
    const headers: Record<string, string> = {};
    const last = this.wanted === undefined ? '' : String(this.wanted - 1);
    if (resuming || this.position > 0 || this.wanted !== undefined) headers['range'] = `bytes=${this.position}-${last}`;
    const ifRange = this.validators?.lastModified ?? this.validators?.etag ?? null;
    if (ifRange !== null) headers['if-range'] = ifRange;
    let response: Response;
    try {
      response = await openRaw(this.connection, { method: 'GET', path: this.route, headers, signal: this.signal }, this.what, this.offline);
    } catch (error: unknown) {
      if (resuming && error instanceof HostApiError && error.code === 'RANGE_NOT_SATISFIABLE') throw this.changed('it is shorter now', error);
      throw error;
    }
    if (response.status === 206) {
      const range = CONTENT_RANGE.exec(response.headers.get('content-range') ?? '');
      if (range === null || Number(range[1]) !== this.position) {
        await response.body?.cancel().catch(() => undefined);
        throw new HostApiError('DECODE_FAILED', `${this.what}: a 206 whose Content-Range does not start at ${this.position}`, response.status, undefined);
      }
      if (resuming && !this.matches(response)) {
        await response.body?.cancel().catch(() => undefined);
        throw this.changed('its ETag is not the first answer\'s');
      }
      this.end = Number(range[2]) + 1;
      if (resuming) {
        this.resumes += 1;
        this.onResume?.(this.position);
      }
    } else {
      await this.whole(response, resuming);
    }
    this.validators ??= { etag: response.headers.get('etag'), lastModified: response.headers.get('last-modified') };
    const body = response.body;
    if (body === null) {
      if (this.end !== undefined && this.position < this.end) throw new HostApiError('DECODE_FAILED', `${this.what}: an answer without a body`, response.status, undefined);
      return undefined;
    }
    this.reader = body.getReader();
    return this.reader;
  }

  /** A 200: the whole file. To a resumed request it says the file changed (If-Range did not match). */
  private async whole(response: Response, resuming: boolean): Promise<void> {
    if (resuming) {
      await response.body?.cancel().catch(() => undefined);
      throw this.changed('the host answered the whole file to a resumed range');
    }
    if (this.position > 0) {
      await response.body?.cancel().catch(() => undefined);
      throw new HostApiError('DECODE_FAILED', `${this.what}: the host answered ${response.status} to a range request`, response.status, undefined);
    }
    const length = response.headers.get('content-length');
    if (length !== null && /^\d+$/.test(length)) {
      const size = Number(length);
      if (this.end !== undefined && this.end < size) {
        await response.body?.cancel().catch(() => undefined);
        throw new HostApiError('DECODE_FAILED', `${this.what}: the host answered ${response.status} to a range request`, response.status, undefined);
      }
      this.end = size;
    }
  }
}
