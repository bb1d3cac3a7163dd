import { existsSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Resolves when `path` exists: a file watch on its directory, not a sleep. Rejects after `timeoutMs`. */
export function waitForFile(path: string, timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const watcher = watch(dirname(path), (_event, name) => {
      if (name === basename(path) && existsSync(path)) done();
    });
    const timer = setTimeout(() => done(new Error(`${path} did not appear within ${timeoutMs} ms`)), timeoutMs);
    function done(error?: Error): void {
      watcher.close();
      clearTimeout(timer);
      if (error === undefined) resolve();
      else reject(error);
    }
    if (existsSync(path)) done();
  });
}

/** Resolves when `path` no longer exists: a file watch on its directory, not a sleep. Rejects after `timeoutMs`. */
export function waitForFileGone(path: string, timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const watcher = watch(dirname(path), (_event, name) => {
      if (name === basename(path) && !existsSync(path)) done();
    });
    const timer = setTimeout(() => done(new Error(`${path} was still there after ${timeoutMs} ms`)), timeoutMs);
    function done(error?: Error): void {
      watcher.close();
      clearTimeout(timer);
      if (error === undefined) resolve();
      else reject(error);
    }
    if (!existsSync(path)) done();
  });
}
