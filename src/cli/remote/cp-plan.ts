/**
 * What `exec-rx cp` copies: the walk of either side into a list of files to copy (directories made on
 * the way), each a job the command runs several at a time. Bytes only: a local symlink to a file is
 * followed, one to a directory skipped with a note; a remote entry is what its path names (a symlink is
 * read as its target), a remote symlink to a directory skipped with a note; what is neither a file nor a
 * directory is a failed file.
 */
import type { Dirent } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { HostApiError } from '../../client/host-api-error';
import type { HostFiles } from '../../client/host-files';

/** One file to copy: what it is called in messages, its size when known, and the copy itself. */
export interface CopyJob {
  readonly label: string;
  readonly size: number | undefined;
  /** Copies it, reporting each chunk's bytes to `moved`. */
  run(moved: (bytes: number) => void): Promise<void>;
}

/** A plan: the jobs, and what the walk could not take (a line each, counted as failed files). */
export interface CopyPlan {
  readonly jobs: CopyJob[];
  readonly failures: string[];
  readonly notes: string[];
}

/** `name` under the remote directory `dir` (POSIX `/`, or `\` under a Windows path). */
export function remoteJoin(dir: string, name: string): string {
  const separator = dir.startsWith('/') ? '/' : '\\';
  return dir.endsWith(separator) ? `${dir}${name}` : `${dir}${separator}${name}`;
}

/** The last name of a remote path. */
export function remoteBase(path: string): string {
  return path.split(/[\\/]/).filter((part) => part !== '').pop() ?? path;
}

/** The remote directory holding `path` (`undefined` for a root). */
export function remoteParent(path: string): string | undefined {
  const trimmed = path.replace(/[\\/]+$/, '');
  const at = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  if (at < 0) return undefined;
  const parent = trimmed.slice(0, at);
  if (parent === '') return '/';
  return /^[A-Za-z]:$/.test(parent) ? `${parent}\\` : parent;
}

/** Whether the remote `path` is a directory; `false` when there is nothing there. */
export async function remoteIsDirectory(files: HostFiles, path: string): Promise<boolean> {
  try {
    return (await files.stat(path)).type === 'directory';
  } catch (error: unknown) {
    if (error instanceof HostApiError && error.code === 'FILE_NOT_FOUND') return false;
    throw error;
  }
}

/** Whether the local `path` is a directory; `false` when there is nothing there. */
export async function localIsDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (error: unknown) {
    if (typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * The remote directory `source` walked (by its listings, one directory at a time) into jobs copying each
 * file under `root` here; local directories made on the way. `download` copies one file.
 */
export async function planDownload(
  files: HostFiles,
  source: string,
  root: string,
  download: (remote: string, local: string) => CopyJob,
): Promise<CopyPlan> {
  const plan: CopyPlan = { jobs: [], failures: [], notes: [] };
  const queue: [string, string][] = [[source, root]];
  await mkdir(root, { recursive: true });
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const [remoteDir, localDir] = next;
    const listing = await files.list(remoteDir);
    if (listing.truncated) plan.failures.push(`${remoteDir}: the host listed only part of it (${listing.entries.length} entries): the rest is not copied`);
    for (const entry of listing.entries) {
      const local = join(localDir, entry.name);
      if (entry.type === 'directory' && entry.isSymlink) plan.notes.push(`${entry.path}: a symlink to a directory, skipped`);
      else if (entry.type === 'directory') {
        await mkdir(local, { recursive: true });
        queue.push([entry.path, local]);
      } else if (entry.type === 'file') plan.jobs.push({ ...download(entry.path, local), size: entry.size });
      else plan.failures.push(`${entry.path}: neither a file nor a directory, not copied`);
    }
  }
  return plan;
}

/**
 * The local directory `source` walked into jobs copying each file under the remote `root`; remote
 * directories made on the way (before their files). `upload` copies one file.
 */
export async function planUpload(files: HostFiles, source: string, root: string, upload: (local: string, remote: string, size: number) => CopyJob): Promise<CopyPlan> {
  const plan: CopyPlan = { jobs: [], failures: [], notes: [] };
  await files.mkdir(root, { parents: true });
  const queue: [string, string][] = [[source, root]];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const [localDir, remoteDir] = next;
    const entries: Dirent[] = await readdir(localDir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const local = join(localDir, entry.name);
      const remote = remoteJoin(remoteDir, entry.name);
      let kind: 'file' | 'directory' | 'other' = entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : 'other';
      let size: number | undefined;
      if (entry.isSymbolicLink()) {
        const target = await stat(local).catch(() => undefined);
        if (target === undefined) {
          plan.failures.push(`${local}: a symlink to nothing, not copied`);
          continue;
        }
        if (target.isDirectory()) {
          plan.notes.push(`${local}: a symlink to a directory, skipped`);
          continue;
        }
        kind = target.isFile() ? 'file' : 'other';
        size = target.size;
      }
      if (kind === 'directory') {
        await files.mkdir(remote, { parents: true });
        queue.push([local, remote]);
      } else if (kind === 'file') plan.jobs.push(upload(local, remote, size ?? (await stat(local)).size));
      else plan.failures.push(`${local}: neither a file nor a directory, not copied`);
    }
  }
  return plan;
}

/** Where a copy of `source` (named `name`) goes when the destination is `destination`: into it when it is a directory. */
export const into = (destinationIsDirectory: boolean, destination: string, name: string, joinWith: (dir: string, name: string) => string): string =>
  destinationIsDirectory ? joinWith(destination, name) : destination;

/** The local base name (for a copy into a remote directory). */
export const localBase = (path: string): string => basename(path.replace(/[\\/]+$/, '')) || path;
