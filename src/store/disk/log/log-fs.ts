/**
 * The file system an output log uses, as a narrow port: the few calls it makes, so that a spec can
 * make one of them fail (a write with ENOSPC) or count them (reads, syncs). {@link nodeLogFs} is the
 * real one, over `node:fs/promises`.
 */
import { mkdir, open, readdir, readFile, rename, rm, stat, statfs, unlink } from 'node:fs/promises';
import { errnoOf } from '../../errno';

/** An open file of a log: a segment, its index, or a temp file about to be renamed. */
export interface LogFile {
  /** Reads up to `length` bytes at `position` into `buffer` from its start; resolves the bytes read (fewer at the end). */
  read(buffer: Buffer, length: number, position: number): Promise<number>;
  /** Writes all of `data` at the end of the file (an append-mode file) or at its position. */
  write(data: Buffer): Promise<void>;
  /** Writes all of `parts`, in order, as {@link LogFile.write} would their concatenation (one `writev` call when the kernel takes it all). */
  writev(parts: readonly Buffer[]): Promise<void>;
  /** fdatasync: what was written is on the disk. */
  datasync(): Promise<void>;
  /** Cuts the file to `length` bytes. */
  truncate(length: number): Promise<void>;
  /** Closes the file. */
  close(): Promise<void>;
}

/** How a file is opened: `append` (created if missing), `read`, `update` (read and write, must exist), `replace` (created or emptied). */
export type LogFileMode = 'append' | 'read' | 'update' | 'replace';

const FLAGS: Readonly<Record<LogFileMode, string>> = { append: 'a', read: 'r', update: 'r+', replace: 'w' };

/** The calls an output log and its store make on the file system. Paths are absolute. */
export interface LogFs {
  /** Opens a file. */
  open(path: string, mode: LogFileMode): Promise<LogFile>;
  /** A whole file, or undefined when it does not exist. */
  readFile(path: string): Promise<Buffer | undefined>;
  /** Renames a file over another (atomic within a file system). */
  rename(from: string, to: string): Promise<void>;
  /** Removes a file; a missing one is not an error. */
  unlink(path: string): Promise<void>;
  /** Removes a directory and everything under it; a missing one is not an error. */
  removeTree(path: string): Promise<void>;
  /** A file's size in bytes, or undefined when it does not exist. */
  fileSize(path: string): Promise<number | undefined>;
  /** Makes a directory and its parents. */
  mkdir(path: string): Promise<void>;
  /** The names in a directory; none when it does not exist. */
  readdir(path: string): Promise<string[]>;
  /** Bytes free to an unprivileged user on the file system holding `path` (statfs `bavail * bsize`). */
  freeBytes(path: string): Promise<number>;
}


const isMissing = (error: unknown): boolean => errnoOf(error) === 'ENOENT';

async function openFile(path: string, mode: LogFileMode): Promise<LogFile> {
  const handle = await open(path, FLAGS[mode]);
  return {
    read: async (buffer, length, position) => (await handle.read(buffer, 0, length, position)).bytesRead,
    write: async (data) => {
      for (let done = 0; done < data.byteLength; ) done += (await handle.write(data, done, data.byteLength - done)).bytesWritten;
    },
    writev: async (parts) => {
      let rest = parts.filter((part) => part.byteLength > 0);
      while (rest.length > 0) {
        let written = (await handle.writev(rest)).bytesWritten;
        if (written === 0) throw Object.assign(new Error('writev wrote nothing'), { code: 'EIO' });
        // A short write (a signal, a nearly full disk): go on from the first byte not written.
        while (rest.length > 0 && written > 0) {
          const head = rest[0];
          if (head === undefined) break;
          if (written >= head.byteLength) {
            written -= head.byteLength;
            rest = rest.slice(1);
          } else {
            rest = [head.subarray(written), ...rest.slice(1)];
            written = 0;
          }
        }
      }
    },
    datasync: () => handle.datasync(),
    truncate: (length) => handle.truncate(length),
    close: () => handle.close(),
  };
}

/** The real file system, over `node:fs/promises`. */
export const nodeLogFs: LogFs = {
  open: openFile,
  readFile: async (path) => {
    try {
      return await readFile(path);
    } catch (error: unknown) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  },
  rename: (from, to) => rename(from, to),
  unlink: async (path) => {
    try {
      await unlink(path);
    } catch (error: unknown) {
      if (!isMissing(error)) throw error;
    }
  },
  fileSize: async (path) => {
    try {
      return (await stat(path)).size;
    } catch (error: unknown) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  },
  removeTree: (path) => rm(path, { recursive: true, force: true }),
  mkdir: async (path) => {
    await mkdir(path, { recursive: true });
  },
  readdir: async (path) => {
    try {
      return await readdir(path);
    } catch (error: unknown) {
      if (isMissing(error)) return [];
      throw error;
    }
  },
  freeBytes: async (path) => {
    const stats = await statfs(path);
    return stats.bavail * stats.bsize;
  },
};

/**
 * Replaces the file at `path` with `data` so that a crash leaves the old file or the new one, never a
 * mix: writes a temp file next to it, syncs it, renames it over `path`.
 */
export async function writeAtomically(fs: LogFs, path: string, data: Buffer): Promise<void> {
  const temp = `${path}.tmp`;
  const file = await fs.open(temp, 'replace');
  try {
    await file.write(data);
    await file.datasync();
  } finally {
    await file.close();
  }
  await fs.rename(temp, path);
}

/**
 * The JSON object in the file at `path` (one `writeAtomically` wrote), as a record of unknown fields:
 * undefined when the file is missing, is not JSON, or holds something other than an object. Never
 * trusts a field: the caller checks each one it reads.
 */
export async function readJsonObject(fs: LogFs, path: string): Promise<Readonly<Record<string, unknown>> | undefined> {
  const data = await fs.readFile(path);
  if (data === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : undefined;
}
