import { existsSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Resolves once `path` exists (`present`) or no longer does: a file watch on its directory, not a sleep. Rejects after `timeoutMs`. */
function waitUntil(path: string, present: boolean, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const there = (): boolean => existsSync(path) === present;
    const watcher = watch(dirname(path), (_event, name) => {
      if (name === basename(path) && there()) done();
    });
    const timer = setTimeout(() => done(new Error(`${path} ${present ? 'did not appear' : 'was still there'} within ${timeoutMs} ms`)), timeoutMs);
    function done(error?: Error): void {
      watcher.close();
      clearTimeout(timer);
      if (error === undefined) resolve();
      else reject(error);
    }
    if (there()) done();
  });
}

/** Resolves when `path` exists: a file watch on its directory, not a sleep. Rejects after `timeoutMs`. */
export const waitForFile = (path: string, timeoutMs = 20_000): Promise<void> => waitUntil(path, true, timeoutMs);

/** Resolves when `path` no longer exists: a file watch on its directory, not a sleep. Rejects after `timeoutMs`. */
export const waitForFileGone = (path: string, timeoutMs = 20_000): Promise<void> => waitUntil(path, false, timeoutMs);
