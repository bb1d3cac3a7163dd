/**
 * The file routes that read: a path's metadata, a directory's entries, a find by glob, and a download
 * ticket. Each checks the path (`./file-path`) and the roots (`./file-roots`) first.
 */
import type { FileEntry, FindResult, FoundPath } from '../../../wire/files-api';
import { API_PREFIX } from '../../../wire/operator-api';
import { discardBody } from '../json-body';
import { TICKET_PARAM } from '../log-tickets';
import { ApiProblem } from '../problem';
import { single } from '../process-reads';
import { sendApiJson } from '../responses';
import type { RouteContext } from '../router';
import { entryOf } from './file-entry';
import type { FilePath } from './file-path';
import { childOf, nativeOf, normalized } from './file-path';
import type { FilesContext } from './files-context';
import { allowedPath, callsOf, pathParam } from './files-context';
import { globMatcher } from './glob';

/** The most entries a listing answers (sorted by name, the first ones); past it `truncated`. */
export const MAX_LISTED_ENTRIES = 10_000;
/** The walk's limits of a find: defaults and the most a client may ask. */
export const FIND_LIMITS = { maxDepth: 8, maxDepthCap: 64, maxEntries: 1_000, maxEntriesCap: 10_000, maxDirectories: 10_000 } as const;

/** The ticket scope of a file: never a process id (those are safe ids, without `:`). */
export const fileTicketScope = (path: FilePath): string => `file:${normalized(path).native}`;

/** `GET …/files/metadata?path=`: the path's `FileEntry`. */
export async function getMetadata(files: FilesContext, route: RouteContext): Promise<void> {
  const requested = pathParam(route.query);
  const calls = await callsOf(files, route);
  const path = await allowedPath(files, calls, requested);
  sendApiJson(route.res, files.api.hostInstance, 200, entryOf(path, await calls.metadata(path)));
}

/**
 * `GET …/files/entries?path=`: the directory's entries sorted by name (code units), each with its size and
 * mtime (an `fs/getMetadata` per entry, in the request's lane of the fair queue), at most
 * {@link MAX_LISTED_ENTRIES}. A name that is not UTF-8 cannot cross the protocol (`fileName` is a JSON
 * string): the executor sends it with U+FFFD in place of the bad bytes, and a stat of that name finds
 * nothing, so such an entry is listed with type `other`, size 0 and no mtime.
 */
export async function listEntries(files: FilesContext, route: RouteContext): Promise<void> {
  const requested = pathParam(route.query);
  const calls = await callsOf(files, route);
  const path = await allowedPath(files, calls, requested);
  const listed = (await calls.readDirectory(path)).map((entry) => entry.fileName).sort();
  const names = listed.slice(0, MAX_LISTED_ENTRIES);
  const entries = await Promise.all(
    names.map(async (name): Promise<FileEntry> => {
      const child = childOf(path, name);
      const meta = await calls.metadataIfAny(child).catch(() => undefined);
      if (meta !== undefined) return entryOf(child, meta);
      return { path: normalized(child).native, name, type: 'other', size: 0, modifiedAt: null, isSymlink: false, etag: null };
    }),
  );
  sendApiJson(route.res, files.api.hostInstance, 200, { path: normalized(path).native, entries, truncated: listed.length > names.length });
}

/** A whole-number query parameter within 1..`cap`, or `fallback`. */
function countParam(query: URLSearchParams, name: string, fallback: number, cap: number, min = 1): number {
  const raw = single(query, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d{1,9}$/.test(raw) || value < min || value > cap) throw new ApiProblem(400, 'INVALID_REQUEST', `${name} must be a whole number from ${min} to ${cap}`);
  return value;
}

/**
 * `GET …/files/find?path=&glob=&maxDepth=&maxEntries=`: what `fs/walk` finds under the directory (hidden
 * directories are not descended into, directory symlinks not followed), filtered by the glob
 * (`./glob`), at most `maxEntries`; `truncated` when the walk hit a limit or more matched.
 */
export async function find(files: FilesContext, route: RouteContext): Promise<void> {
  const requested = pathParam(route.query);
  const glob = single(route.query, 'glob');
  if (glob !== undefined && (glob === '' || glob.length > 1024)) throw new ApiProblem(400, 'INVALID_REQUEST', 'glob must be 1 to 1024 characters');
  const maxDepth = countParam(route.query, 'maxDepth', FIND_LIMITS.maxDepth, FIND_LIMITS.maxDepthCap, 0);
  const maxEntries = countParam(route.query, 'maxEntries', FIND_LIMITS.maxEntries, FIND_LIMITS.maxEntriesCap);
  const calls = await callsOf(files, route);
  const path = await allowedPath(files, calls, requested);
  const root = normalized(path).native;
  // Without a glob the walk's own limit is the answer's; with one, it walks more and the glob keeps some.
  const walked = await calls.walk(path, {
    options: {
      maxDepth,
      maxDirectories: FIND_LIMITS.maxDirectories,
      maxEntries: glob === undefined ? maxEntries : FIND_LIMITS.maxEntriesCap,
      followDirectorySymlinks: false,
      pruneHiddenDirectories: true,
    },
  });
  const matches = glob === undefined ? () => true : globMatcher(glob);
  const found: FoundPath[] = walked.entries
    .map((entry): FoundPath => ({ path: nativeOf(entry.path, path.style).native, type: entry.kind === 'file' || entry.kind === 'directory' ? entry.kind : 'other' }))
    .filter((entry) => {
      const relative = entry.path.slice(root.length).replace(/^[\\/]+/, '').replace(/\\/g, '/');
      return matches(relative.slice(relative.lastIndexOf('/') + 1), relative);
    });
  const result: FindResult = { path: root, entries: found.slice(0, maxEntries), truncated: walked.truncated || found.length > maxEntries };
  sendApiJson(route.res, files.api.hostInstance, 200, result);
}

/**
 * `POST …/files/content/tickets?path=`: a download ticket for that one file (`./log-tickets`: one use,
 * 60 s, standing for the caller): 201 `{ url, expiresAt }`, the content url with `?path=` and `?ticket=`.
 * The file must exist and be a file (404, 409).
 */
export async function issueFileTicket(files: FilesContext, route: RouteContext): Promise<void> {
  await discardBody(route.req, files.api.maxBodyBytes);
  const requested = pathParam(route.query);
  const calls = await callsOf(files, route);
  const path = await allowedPath(files, calls, requested);
  const meta = await calls.metadata(path);
  if (meta.isDirectory) throw new ApiProblem(409, 'IS_A_DIRECTORY', `${path.native} is a directory`);
  const { ticket, expiresAt } = await files.api.tickets.issue(route.caller, calls.environmentId, fileTicketScope(path));
  const query = new URLSearchParams({ path: normalized(path).native, [TICKET_PARAM]: ticket });
  const url = `${API_PREFIX}/environments/${encodeURIComponent(calls.environmentId)}/files/content?${query.toString()}`;
  sendApiJson(route.res, files.api.hostInstance, 201, { url, expiresAt: new Date(expiresAt).toISOString() });
}
