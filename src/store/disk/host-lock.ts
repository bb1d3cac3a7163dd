/**
 * The exclusive lock of a host's data dir: `host.lock` holds the pid of the host that owns the dir (and
 * a nonce). It is made whole and then linked into place, so it never exists half written; `link` fails
 * when it exists, which makes taking it exclusive. A lock whose pid is no longer alive was left by a host
 * that died: it is moved aside and taken over.
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataDirInUseError } from '../../errors';
import { errnoOf } from '../errno';

/** The lock's file name in the data dir. */
export const LOCK_FILE = 'host.lock';

/** Locks held by this process (a pid reused by us after a restart is no proof that the lock is ours). */
const HELD = new Set<string>();

/** Whether a process with that pid exists (EPERM: it does, it is another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error: unknown) {
    return errnoOf(error) === 'EPERM';
  }
}

const read = async (path: string): Promise<string | undefined> => {
  try {
    return await readFile(path, 'utf8');
  } catch (error: unknown) {
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
};

const quietUnlink = (path: string): Promise<void> => unlink(path).catch(() => undefined);

/** The pid a lock's text names, or undefined when it names none. */
const pidOf = (text: string): number | undefined => {
  const pid = Number(/^(\d+) /.exec(text)?.[1]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
};

/** The lock of one data dir, held from {@link HostLock.take} until {@link HostLock.release}. */
export class HostLock {
  private constructor(
    private readonly path: string,
    private readonly content: string,
  ) {}

  /**
   * Takes the lock of `dataDir` (which must exist). Rejects with {@link DataDirInUseError} when a live
   * process holds it (this one included, when it took it already); a file system error rejects as is.
   */
  static async take(dataDir: string): Promise<HostLock> {
    const path = join(dataDir, LOCK_FILE);
    const nonce = randomBytes(8).toString('hex');
    const content = `${process.pid} ${nonce}\n`;
    const temp = `${path}.${nonce}.tmp`;
    await writeFile(temp, content, { flag: 'wx' });
    try {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        if (await tryLink(temp, path)) {
          HELD.add(path);
          return new HostLock(path, content);
        }
        const found = await read(path);
        if (found === undefined) continue;
        const pid = pidOf(found);
        if (pid !== undefined && alive(pid) && (pid !== process.pid || HELD.has(path))) throw new DataDirInUseError(pid);
        await moveAside(path, found, nonce);
      }
      throw new DataDirInUseError(pidOf((await read(path)) ?? '') ?? 0);
    } finally {
      await quietUnlink(temp);
    }
  }

  /** Releases the lock (removes the file if it is still ours). Idempotent. */
  async release(): Promise<void> {
    if (!HELD.delete(this.path)) return;
    if ((await read(this.path).catch(() => undefined)) === this.content) await quietUnlink(this.path);
  }
}

async function tryLink(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error: unknown) {
    if (errnoOf(error) === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Moves a dead host's lock aside. Another host may have taken it over between our read and the rename:
 * then what was moved is not what was read, and it is linked back (unless a third took the place).
 */
async function moveAside(path: string, stale: string, nonce: string): Promise<void> {
  const aside = `${path}.${nonce}.stale`;
  try {
    await rename(path, aside);
  } catch (error: unknown) {
    if (errnoOf(error) === 'ENOENT') return;
    throw error;
  }
  if ((await read(aside)) !== stale) await tryLink(aside, path);
  await quietUnlink(aside);
}
