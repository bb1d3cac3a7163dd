/**
 * `PUT …/files/content?path=`: a file's new bytes, the raw request body (any content type), streamed into
 * `fs/open` mode `replace` + `fs/writeBlock`s of 1 MiB, at most {@link WRITES_IN_FLIGHT} in flight, and the
 * body read only as fast as they are written (the body is pulled as an async iterator: Node pauses the
 * socket while nothing pulls): a 4 GiB upload holds a few MiB on the host, not the file.
 *
 * - A Content-Length over `files.maxUploadBytes` is refused 413 `BODY_TOO_LARGE` before a byte is read; a
 *   chunked body once it passes the limit (no more is written, the temp file is removed). Either way the
 *   rest of the body is read and discarded up to `LINGER_BYTES` (`../json-body`'s `bodyTooLarge`, nginx's
 *   lingering close), so a client that writes its whole body before reading (Node's fetch) gets the 413,
 *   not a reset; a body declared longer than that gets `Connection: close`.
 * - `If-None-Match: *` (create only) and `If-Match: <etag>` (replace only that version) are checked against
 *   `fs/getMetadata` before the upload: 412 `PRECONDITION_FAILED`. The executor has no compare-and-swap, so
 *   a change between that check and the final move is not seen (the move replaces whatever is there then).
 * - The bytes go to a temp sibling `.<name>.exec-rx-upload-<random>` and are moved into place at the end
 *   (`./file-transfers`: `mv -f` on POSIX, atomic within the directory's filesystem). What a replaced file
 *   keeps: nothing of the old one. The new file has the temp file's mode (0644-ish, from the executor's
 *   umask) and owner: an old file's execute bit is lost. On Windows the move is `fs/copy` + `fs/remove`,
 *   not atomic.
 * - A client that goes away halfway: the temp file is removed, the target unchanged. A connection to the
 *   executor that changed under the upload (a reconnect, another replica: write handles are per connection,
 *   and `replace` truncates, so it cannot go on) → 503 `UPLOAD_INTERRUPTED` with `Retry-After`; the temp file
 *   is removed when possible, else remembered and swept (`./upload-sweeper`). Resumable uploads are out of
 *   scope: the client sends the whole file again.
 * - Answers 201 (created) or 200 (replaced) with the `FileEntry` and its `ETag`.
 */
import { randomBytes } from 'node:crypto';
import type { SchedulerLike, Subscription } from 'rxjs';
import { liftBodyDeadline } from '../../body-deadline';
import type { IncomingMessage } from 'node:http';
import type { RemoteFileHandle } from '../../../fs/remote-file-handle';
import { WRITE_BLOCK_MAX_BYTES } from '../../../wire/limits';
import { bodyTooLarge } from '../json-body';
import { ApiProblem, problemOf } from '../problem';
import { sendApiJson } from '../responses';
import type { RouteContext } from '../router';
import type { FileCalls } from './file-calls';
import { entryOf, etagOf } from './file-entry';
import type { FilePath } from './file-path';
import { baseName, childOf, isRoot, parentOf } from './file-path';
import { noneMatchHits } from './byte-range';
import type { FilesContext } from './files-context';
import { allowedPath, callsOf, pathParam } from './files-context';
import { moveOver } from './file-transfers';
import type { FsGetMetadataResponse } from '../../../wire/fs';

/** `fs/writeBlock`s in flight at once for one upload. */
export const WRITES_IN_FLIGHT = 2;


/** What a 413 of an upload says. */
const tooLargeDetail = (limit: number): string => `an upload may be at most ${limit} bytes (--max-upload-bytes)`;

/** The temp sibling an upload of `target` is written to. */
export const tempOf = (target: FilePath): FilePath => childOf(parentOf(target), `.${baseName(target)}.exec-rx-upload-${randomBytes(8).toString('hex')}`);

/** Throws 412 unless the request's `If-None-Match` / `If-Match` hold for the target's metadata (`undefined`: missing). */
function checkPreconditions(req: IncomingMessage, path: FilePath, meta: FsGetMetadataResponse | undefined): void {
  const noneMatch = req.headers['if-none-match'];
  const match = req.headers['if-match'];
  if (meta !== undefined && typeof noneMatch === 'string' && noneMatchHits(noneMatch, etagOf(meta))) {
    throw new ApiProblem(412, 'PRECONDITION_FAILED', `${path.native} exists (If-None-Match)`);
  }
  if (typeof match !== 'string') return;
  const strip = (tag: string): string => tag.trim().replace(/^W\//, '');
  const holds = meta !== undefined && match.split(',').some((tag) => tag.trim() === '*' || strip(tag) === strip(etagOf(meta)));
  if (holds) return;
  const detail = meta === undefined ? `${path.native} does not exist (If-Match)` : `${path.native} is not the version If-Match names (now ${etagOf(meta)})`;
  throw new ApiProblem(412, 'PRECONDITION_FAILED', detail);
}

/**
 * The body's chunks, each waited for at most `idleMs` (`files.uploadIdleMs`; the host's own waits on the
 * executor do not count): past it the iteration throws ApiProblem 408 `REQUEST_TIMEOUT` and the connection
 * is closed. An upload has no deadline as a whole (`../../body-deadline` is lifted for it): a 16 GiB one
 * takes what it takes. Leaving the loop does not destroy the body (a refused one is drained).
 */
async function* idleBounded(req: IncomingMessage, scheduler: SchedulerLike, idleMs: number): AsyncGenerator<Buffer> {
  const chunks = req.iterator({ destroyOnReturn: false })[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  for (;;) {
    let timer: Subscription | undefined;
    const idle = new Promise<never>((_resolve, reject) => {
      timer = scheduler.schedule(() => {
        req.socket.destroy();
        reject(new ApiProblem(408, 'REQUEST_TIMEOUT', `no byte of the upload came for ${idleMs} ms`, { connection: 'close' }));
      }, idleMs);
    });
    try {
      const next = await Promise.race([chunks.next(), idle]);
      if (next.done === true) return;
      yield next.value;
    } finally {
      timer?.unsubscribe();
    }
  }
}

/**
 * Writes the body to `handle` as described in the module's doc; resolves with the bytes written. Rejects
 * with 413 past `limit` (nothing more is written; the rest of the body is being drained: `bodyTooLarge`),
 * the body's error when the client went away, or the first write's problem.
 */
async function pump(
  req: IncomingMessage,
  calls: FileCalls,
  temp: FilePath,
  handle: RemoteFileHandle,
  limit: number,
  idle: { readonly scheduler: SchedulerLike; readonly ms: number },
): Promise<number> {
  const inFlight: Promise<void>[] = [];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let offset = 0;
  const send = async (block: Buffer): Promise<void> => {
    const write = calls.writeBlock(temp, handle, offset, block);
    write.catch(() => undefined);
    inFlight.push(write);
    offset += block.byteLength;
    if (inFlight.length >= WRITES_IN_FLIGHT) await inFlight.shift();
  };
  let over: number | undefined;
  // Leaving the loop must not destroy the body: a refused one is drained, so the client reads the 413.
  for await (const chunk of idleBounded(req, idle.scheduler, idle.ms)) {
    if (offset + pendingBytes + chunk.byteLength > limit) {
      over = offset + pendingBytes + chunk.byteLength;
      break;
    }
    pending.push(chunk);
    pendingBytes += chunk.byteLength;
    while (pendingBytes >= WRITE_BLOCK_MAX_BYTES) {
      const all = Buffer.concat(pending);
      await send(all.subarray(0, WRITE_BLOCK_MAX_BYTES));
      pending = [all.subarray(WRITE_BLOCK_MAX_BYTES)];
      pendingBytes = all.byteLength - WRITE_BLOCK_MAX_BYTES;
    }
  }
  // Drained from now on (the loop let go of the body above), while the caller removes the temp file.
  if (over !== undefined) throw bodyTooLarge(req, tooLargeDetail(limit), over);
  if (pendingBytes > 0) await send(Buffer.concat(pending));
  await Promise.all(inFlight);
  return offset;
}

/** Whether a problem says the executor's connection changed under a write handle. */
const interrupted = (problem: ApiProblem): boolean => problem.code === 'HANDLE_LOST' || problem.code === 'TRANSPORT_CLOSED';

/** `PUT …/files/content` (see the module's doc). */
export async function putContent(files: FilesContext, route: RouteContext): Promise<void> {
  const { req, res, audit } = route;
  const limit = files.settings.maxUploadBytes;
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > limit) throw bodyTooLarge(req, tooLargeDetail(limit));
  const requested = pathParam(route.query);
  if (audit !== undefined) audit.path = requested.native;
  if (isRoot(requested)) throw new ApiProblem(409, 'IS_A_DIRECTORY', `${requested.native} is a directory`);
  const calls = await callsOf(files, route);
  const path = await allowedPath(files, calls, requested);
  const before = await calls.metadataIfAny(path);
  if (before?.isDirectory === true) throw new ApiProblem(409, 'IS_A_DIRECTORY', `${path.native} is a directory`);
  checkPreconditions(req, path, before);
  const release = await calls.shared.handles.take(calls.environmentId, calls.signal);
  const temp = tempOf(path);
  files.uploads.uploadedTo(calls.environmentId, parentOf(path));
  try {
    const size = await writeTemp(files, calls, route, temp);
    if (audit !== undefined) audit.size = size;
    await moveOver(calls, temp, path, false, files.api.scheduler);
  } catch (error: unknown) {
    await files.uploads.discard(calls.unbound(), temp);
    // A client that went away hears nothing: the temp file is gone, the target unchanged.
    if (calls.signal?.aborted === true || req.readableAborted) return;
    const problem = problemOf(error);
    if (interrupted(problem)) {
      const detail = `the connection to the executor changed during the upload of ${path.native}; nothing was changed: send it again`;
      throw new ApiProblem(503, 'UPLOAD_INTERRUPTED', detail, { 'retry-after': '2' });
    }
    throw error;
  } finally {
    release();
  }
  if (res.destroyed) return;
  const entry = entryOf(path, await calls.metadata(path));
  sendApiJson(res, files.api.hostInstance, before === undefined ? 201 : 200, entry, entry.etag === null ? {} : { etag: entry.etag });
}

/** Opens the temp file, writes the body into it and closes it; resolves with its size. */
async function writeTemp(files: FilesContext, calls: FileCalls, route: RouteContext, temp: FilePath): Promise<number> {
  const handle = await calls.open(temp, 'replace');
  try {
    // From here the upload bounds its client's pauses itself, not the body's whole time.
    liftBodyDeadline(route.req);
    return await pump(route.req, calls, temp, handle, files.settings.maxUploadBytes, { scheduler: files.api.scheduler, ms: files.settings.uploadIdleMs });
  } finally {
    await calls.close(handle);
  }
}
