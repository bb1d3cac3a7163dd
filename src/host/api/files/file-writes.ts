/**
 * The file routes that change a tree: make a directory, remove a path, copy and move. Each checks its
 * paths (`./file-path`) and the roots (`./file-roots`) first, and tells the audit trail its path (and
 * destination), never any content. `fs/createDirectory` and `fs/remove` default to recursive and
 * `fs/remove` of a missing path succeeds (docs/protocol.md#filesystem-methods): `recursive` is always sent, and a missing path
 * is looked up first and answered 404.
 */
import type { FileEntry } from '../../../wire/files-api';
import { CreateDirectoryRequest, TransferRequest } from '../../../wire/files-api';
import type { FsGetMetadataResponse } from '../../../wire/fs';
import { readJsonBody } from '../json-body';
import { ApiProblem } from '../problem';
import { single } from '../process-reads';
import { sendApiJson, sendEmpty } from '../responses';
import type { RouteContext } from '../router';
import type { FileCalls } from './file-calls';
import { entryOf } from './file-entry';
import type { FilePath } from './file-path';
import { checkedPath, isRoot, isWithin, normalized } from './file-path';
import type { FilesContext } from './files-context';
import { allowedPath, callsOf, pathParam } from './files-context';
import { copyOver, moveOver, removeTree } from './file-transfers';

/** The entry of `path` once a call made it, answered 201. */
async function created(files: FilesContext, route: RouteContext, calls: FileCalls, path: FilePath): Promise<void> {
  const entry: FileEntry = entryOf(path, await calls.metadata(path));
  sendApiJson(route.res, files.api.hostInstance, 201, entry);
}

/**
 * `POST …/files/directories` `{ path, parents? }`: makes the directory (201 `FileEntry`). With `parents`,
 * as `mkdir -p`: a directory already there is no error (200 with its `FileEntry`). 409 `FILE_EXISTS` when
 * the path exists without `parents`, or is not a directory; 404 `FILE_NOT_FOUND` when its parent is
 * missing without `parents`.
 */
export async function makeDirectory(files: FilesContext, route: RouteContext): Promise<void> {
  const body = await readJsonBody(route.req, CreateDirectoryRequest, files.api.maxBodyBytes);
  const requested = checkedPath(body.path);
  if (route.audit !== undefined) route.audit.path = requested.native;
  const calls = await callsOf(files, route);
  const path = await allowedPath(files, calls, requested);
  const there = await calls.metadataIfAny(path);
  if (there !== undefined && body.parents === true && there.isDirectory) return sendApiJson(route.res, files.api.hostInstance, 200, entryOf(path, there));
  if (there !== undefined) throw new ApiProblem(409, 'FILE_EXISTS', `${path.native} exists${there.isDirectory ? '' : ' and is not a directory'}`);
  await calls.createDirectory(path, body.parents === true);
  await created(files, route, calls, path);
}

/** `?recursive=`: `true` or `false` (the default). */
function recursiveOf(query: URLSearchParams): boolean {
  const raw = single(query, 'recursive');
  if (raw !== undefined && raw !== 'true' && raw !== 'false') throw new ApiProblem(400, 'INVALID_REQUEST', 'recursive must be true or false');
  return raw === 'true';
}

/**
 * `DELETE …/files?path=&recursive=`: 204. A missing path is 404 (looked up first); a symlink is removed
 * itself, never its target; a non-empty directory without `recursive=true` is 409 `DIRECTORY_NOT_EMPTY`. A
 * tree is removed by a helper process (`rm -rf --`) on POSIX, `fs/remove` on Windows (`./file-transfers`).
 */
export async function removePath(files: FilesContext, route: RouteContext): Promise<void> {
  const requested = pathParam(route.query);
  if (route.audit !== undefined) route.audit.path = requested.native;
  const recursive = recursiveOf(route.query);
  if (isRoot(requested)) throw new ApiProblem(400, 'INVALID_PATH', 'the root may not be removed');
  const calls = await callsOf(files, route);
  const path = await allowedPath(files, calls, requested);
  const meta = await calls.metadata(path);
  if (route.audit !== undefined) route.audit.size = meta.size;
  if (meta.isDirectory && !meta.isSymlink) {
    if (recursive) await removeTree(calls, path, files.api.scheduler);
    else {
      const inside = await calls.readDirectory(path);
      if (inside.length > 0) throw new ApiProblem(409, 'DIRECTORY_NOT_EMPTY', `${path.native} is not empty: remove it with recursive=true`);
      await calls.remove(path, false);
    }
  } else await calls.remove(path, false);
  sendEmpty(route.res, files.api.hostInstance, 204);
}

/** What a copy or a move checks before it runs: both paths, the source's metadata, the destination's. */
interface Transfer {
  readonly calls: FileCalls;
  readonly source: FilePath;
  readonly destination: FilePath;
  readonly meta: FsGetMetadataResponse;
}

async function transferOf(files: FilesContext, route: RouteContext): Promise<Transfer> {
  const body = await readJsonBody(route.req, TransferRequest, files.api.maxBodyBytes);
  const source = checkedPath(body.source, 'source');
  const destination = checkedPath(body.destination, 'destination');
  if (route.audit !== undefined) {
    route.audit.path = source.native;
    route.audit.destination = destination.native;
  }
  if (isRoot(source) || isRoot(destination)) throw new ApiProblem(400, 'INVALID_PATH', 'the root may not be copied, moved or replaced');
  if (isWithin(normalized(destination), normalized(source))) throw new ApiProblem(400, 'INVALID_PATH', 'the destination may not be the source or inside it');
  const calls = await callsOf(files, route);
  await allowedPath(files, calls, source);
  await allowedPath(files, calls, destination);
  const meta = await calls.metadata(source);
  if (route.audit !== undefined) route.audit.size = meta.size;
  const there = await calls.metadataIfAny(destination);
  if (there !== undefined) {
    if (body.overwrite !== true) throw new ApiProblem(409, 'FILE_EXISTS', `${destination.native} exists: send overwrite: true to replace it`);
    if (there.isDirectory !== meta.isDirectory) {
      const detail = `${destination.native} is ${there.isDirectory ? 'a directory' : 'not a directory'}, the source ${meta.isDirectory ? 'is' : 'is not'}`;
      throw new ApiProblem(409, there.isDirectory ? 'IS_A_DIRECTORY' : 'NOT_A_DIRECTORY', detail);
    }
    // A directory is replaced, not merged (cp and mv would put the source inside it).
    if (there.isDirectory) await removeTree(calls, destination, files.api.scheduler);
  }
  return { calls, source, destination, meta };
}

/**
 * `POST …/files/copy` `{ source, destination, overwrite? }`: 201 with the destination's `FileEntry`. A
 * destination that exists is 409 `FILE_EXISTS` unless `overwrite` (a directory is then replaced whole, not
 * merged). POSIX: `cp -a --` (modes, times and symlinks kept); Windows: `fs/copy`.
 */
export async function copyPath(files: FilesContext, route: RouteContext): Promise<void> {
  const { calls, source, destination, meta } = await transferOf(files, route);
  await copyOver(calls, source, destination, meta.isDirectory, files.api.scheduler);
  await created(files, route, calls, destination);
}

/**
 * `POST …/files/move` `{ source, destination, overwrite? }`: 201 with the destination's `FileEntry`; the
 * same checks as a copy. POSIX: `mv -f --` (a rename within one filesystem); Windows: `fs/copy` + `fs/remove`.
 */
export async function movePath(files: FilesContext, route: RouteContext): Promise<void> {
  const { calls, source, destination, meta } = await transferOf(files, route);
  await moveOver(calls, source, destination, meta.isDirectory, files.api.scheduler);
  await created(files, route, calls, destination);
}
