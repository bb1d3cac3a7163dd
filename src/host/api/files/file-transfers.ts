/**
 * Moving, copying and removing trees on an executor, as the file routes do them:
 *
 * - On a POSIX executor each is a helper process (`./file-helpers`): `mv -f -- SRC DST` (a rename within one
 *   filesystem: atomic, and it keeps the moved file's mode, owner and times; across filesystems `mv` copies
 *   and removes), `cp -a -- SRC DST` (keeps modes, times, symlinks as symlinks), `rm -rf -- PATH`. The
 *   request line is held only for each `process/start`.
 * - On a Windows executor (`platformOs` `windows`: no `sh`, `mv`, `cp`): `fs/copy` (recursive for a
 *   directory) and `fs/remove`, each one request that holds the line for as long as it runs. A move there is
 *   a copy then a remove: not atomic, and a reader can see the destination half written.
 */
import type { SchedulerLike } from 'rxjs';
import type { FileCalls } from './file-calls';
import type { FilePath } from './file-path';
import { isWindows, runHelperOrThrow } from './file-helpers';

/** Moves `source` to `destination` (which must not be a directory that exists; the caller checks). */
export async function moveOver(calls: FileCalls, source: FilePath, destination: FilePath, isDirectory: boolean, scheduler: SchedulerLike): Promise<void> {
  if (await isWindows(calls.environment)) {
    await calls.copy(source, destination, isDirectory);
    await calls.remove(source, isDirectory);
    return;
  }
  await runHelperOrThrow(calls, source, ['mv', '-f', '--', source.native, destination.native], scheduler);
}

/** Copies `source` to `destination` (a directory with all it holds); the caller checks the destination. */
export async function copyOver(calls: FileCalls, source: FilePath, destination: FilePath, isDirectory: boolean, scheduler: SchedulerLike): Promise<void> {
  if (await isWindows(calls.environment)) return calls.copy(source, destination, isDirectory);
  await runHelperOrThrow(calls, source, ['cp', '-a', '--', source.native, destination.native], scheduler);
}

/** Removes the tree at `path` (a link itself, never its target). */
export async function removeTree(calls: FileCalls, path: FilePath, scheduler: SchedulerLike): Promise<void> {
  if (await isWindows(calls.environment)) return calls.remove(path, true);
  await runHelperOrThrow(calls, path, ['rm', '-rf', '--', path.native], scheduler);
}
