/**
 * `GET` and `HEAD …/files/content?path=`: a file's bytes, streamed from `fs/open` + pipelined
 * `fs/readBlock`s (the library's `RemoteFileSystem.readIterable`, each read through the request's lane of the
 * fair queue: `FileCalls.readRange`), never `fs/readFile` (which buffers up to 512 MiB in base64). A
 * download holds one of the environment's handles (`HandleCap`: it waits its turn for up to 10 s, then
 * 503 `FILE_BUSY`).
 *
 * - One `Range` (206 with `Content-Range`; 416 problem+json `RANGE_NOT_SATISFIABLE` with `Content-Range: bytes *\/size` past the end; a malformed
 *   one ignored: 200, the whole file), `If-Range` by date, a weak `ETag` `W/"<size>-<mtimeMs>"`,
 *   `Last-Modified`, `If-None-Match` → 304; the safety headers of `./content-headers`.
 * - HEAD is its own handler: `fs/getMetadata` only, the file is never opened.
 * - Written as the client takes it (`res.write` false → wait for `drain`); a client that goes away stops
 *   the reads. The last block is held back until the metadata was read again: when size or mtime changed the
 *   response is cut before it (destroyed: the client sees a short transfer, never a torn file passed as
 *   whole) and logged.
 */
import type { ServerResponse } from 'node:http';
import { HOST_INSTANCE_HEADER } from '../../../wire/operator-api';
import type { FsGetMetadataResponse } from '../../../wire/fs';
import { ApiProblem } from '../problem';
import type { RouteContext } from '../router';
import { ifRangeHolds, noneMatchHits, rangeOf } from './byte-range';
import type { RangeAsk } from './byte-range';
import { contentHeaders } from './content-headers';
import type { FileCalls } from './file-calls';
import { etagOf, lastModifiedOf } from './file-entry';
import { fileProblemOf } from './file-errors';
import type { FilePath } from './file-path';
import { baseName } from './file-path';
import type { FilesContext } from './files-context';
import { allowedPath, callsOf, pathParam } from './files-context';

/** What a download answers before any byte: the status, its headers and the range to send. */
interface Planned {
  readonly status: 200 | 206 | 304;
  readonly headers: Record<string, string>;
  readonly start: number;
  readonly end: number;
}

/** `?disposition=`: `inline` or `attachment` (the default). */
function wantsInline(query: URLSearchParams): boolean {
  const values = query.getAll('disposition');
  if (values.length > 1 || (values[0] !== undefined && values[0] !== 'inline' && values[0] !== 'attachment')) {
    throw new ApiProblem(400, 'INVALID_REQUEST', 'disposition must be inline or attachment, once');
  }
  return values[0] === 'inline';
}

const header = (route: RouteContext, name: string): string | undefined => {
  const value = route.req.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/** The answer a download of a file with `meta` gets for the request's conditionals and Range. */
function plan(files: FilesContext, route: RouteContext, path: FilePath, meta: FsGetMetadataResponse): Planned {
  if (meta.isDirectory) throw new ApiProblem(409, 'IS_A_DIRECTORY', `${path.native} is a directory: list it with …/files/entries`);
  const etag = etagOf(meta);
  const lastModified = lastModifiedOf(meta);
  const base = {
    ...contentHeaders(baseName(path), wantsInline(route.query)),
    etag,
    ...(lastModified === undefined ? {} : { 'last-modified': lastModified }),
    [HOST_INSTANCE_HEADER]: files.api.hostInstance,
  };
  if (noneMatchHits(header(route, 'if-none-match'), etag)) return { status: 304, headers: base, start: 0, end: 0 };
  const ask: RangeAsk = ifRangeHolds(header(route, 'if-range'), lastModified) ? rangeOf(header(route, 'range'), meta.size) : { kind: 'whole' };
  if (ask.kind === 'unsatisfiable') {
    const detail = `the range asked for lies past the end of ${path.native} (${meta.size} bytes)`;
    const validators = { etag, ...(lastModified === undefined ? {} : { 'last-modified': lastModified }) };
    throw new ApiProblem(416, 'RANGE_NOT_SATISFIABLE', detail, { 'content-range': `bytes */${meta.size}`, ...validators });
  }
  if (ask.kind === 'whole') return { status: 200, headers: { ...base, 'content-length': String(meta.size) }, start: 0, end: meta.size };
  const range = `bytes ${ask.start}-${ask.end - 1}/${meta.size}`;
  return { status: 206, headers: { ...base, 'content-length': String(ask.end - ask.start), 'content-range': range }, start: ask.start, end: ask.end };
}

/** Checks the path and reads its metadata: what both GET and HEAD start with. */
async function prepare(files: FilesContext, route: RouteContext): Promise<{ calls: FileCalls; path: FilePath; meta: FsGetMetadataResponse; planned: Planned }> {
  const requested = pathParam(route.query);
  const calls = await callsOf(files, route);
  const path = await allowedPath(files, calls, requested);
  const meta = await calls.metadata(path);
  return { calls, path, meta, planned: plan(files, route, path, meta) };
}

/** Writes the head of an answer without a body (304, HEAD). */
function sendHead(res: ServerResponse, planned: Planned): void {
  const { 'content-length': _length, ...rest } = planned.headers;
  // A HEAD keeps the length GET would send.
  res.writeHead(planned.status, planned.status === 304 ? rest : planned.headers);
  res.end();
}

/** `HEAD …/files/content`: the headers GET would send, from `fs/getMetadata` alone. */
export async function headContent(files: FilesContext, route: RouteContext): Promise<void> {
  const { planned } = await prepare(files, route);
  sendHead(route.res, planned);
}

/** Resolves once `res` may take more (`drain`), or it closed. */
function roomIn(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** `GET …/files/content`: the bytes (see the module's doc). */
export async function getContent(files: FilesContext, route: RouteContext): Promise<void> {
  const { calls, path, meta, planned } = await prepare(files, route);
  const { res } = route;
  if (planned.status !== 200 && planned.status !== 206) return sendHead(res, planned);
  const release = await calls.shared.handles.take(calls.environmentId, calls.signal);
  try {
    const last = await streamTo(res, calls, path, planned);
    if (last === undefined) return;
    const after = await calls.metadata(path).catch(() => undefined);
    if (after === undefined || after.size !== meta.size || after.modifiedAtMs !== meta.modifiedAtMs) {
      const msg = `files: a download of ${path.native} in ${calls.environmentId} was cut: the file changed while it was read`;
      files.log?.warn({ environmentId: calls.environmentId, code: 'FILE_CHANGED' }, msg);
      res.destroy();
      return;
    }
    res.end(last);
  } finally {
    release();
  }
}

/**
 * Writes the planned range to `res` as the client takes it, but for its last block, which it resolves with
 * (empty for an empty range): the answer is complete only once the caller ends it with that block, after
 * checking the file again. The read handle is closed once the range was read (before the caller checks).
 * The status goes out with the first block. Resolves `undefined` when the client went away or a failure cut
 * the answer; rejects with the problem of a failure before any byte went out (409 `FILE_CHANGED` when the
 * file ended before the range did).
 */
async function streamTo(res: ServerResponse, calls: FileCalls, path: FilePath, planned: Planned): Promise<Buffer | undefined> {
  let started = false;
  let held: Buffer = Buffer.alloc(0);
  let got = 0;
  const blocks = calls.readRange(path, planned.start, planned.end);
  try {
    for await (const block of blocks) {
      if (res.destroyed) return undefined;
      if (!started) {
        res.writeHead(planned.status, planned.headers);
        started = true;
      }
      got += block.byteLength;
      const previous = held;
      held = block;
      if (previous.byteLength > 0 && !res.write(previous)) await roomIn(res);
    }
    if (got !== planned.end - planned.start) {
      throw new ApiProblem(409, 'FILE_CHANGED', `${path.native} ended at ${planned.start + got} bytes while it was read (expected ${planned.end})`);
    }
    if (!started) res.writeHead(planned.status, planned.headers);
    return res.destroyed ? undefined : held;
  } catch (error: unknown) {
    // Once bytes went out a failure can only cut the answer (the client sees a short transfer).
    if (started || res.destroyed) {
      res.destroy();
      return undefined;
    }
    throw fileProblemOf(error, path.native);
  } finally {
    // Stops the reads and closes the handle when the loop was left early (idempotent otherwise).
    await blocks.return?.();
  }
}
