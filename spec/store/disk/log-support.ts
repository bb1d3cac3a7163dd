/** Helpers of the output log specs: temp dirs, virtual time, a file system that counts and fails, read loops. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualTimeScheduler } from 'rxjs';
import type { LogEvent } from '../../../src/store/log-events';
import type { LogFile, LogFileMode, LogFs } from '../../../src/store/disk/log/log-fs';
import { nodeLogFs } from '../../../src/store/disk/log/log-fs';
import type { OutputLog } from '../../../src/store/disk/log/output-log';

/** A fresh directory under the OS temp dir; `removeTempDirs` (afterEach) removes them all. */
const made: string[] = [];
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'exec-rx-log-'));
  made.push(dir);
  return dir;
}
export async function removeTempDirs(): Promise<void> {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
}

/** Virtual time: a VirtualTimeScheduler advanced by hand, starting at a plausible epoch time. */
export class VirtualClock {
  readonly scheduler = new VirtualTimeScheduler();
  constructor(start = 1_700_000_000_000) {
    this.scheduler.frame = start;
  }
  now(): number {
    return this.scheduler.now();
  }
  /** Runs the actions due within `ms` and leaves the clock `ms` later. */
  advance(ms: number): void {
    const target = this.scheduler.frame + ms;
    this.scheduler.maxFrames = target;
    this.scheduler.flush();
    this.scheduler.frame = target;
  }
}

/**
 * Lets pending I/O and promise chains run until `done()` holds (real I/O, a disk sync included: up to
 * 100000 turns of the event loop), or, without `done`, for `turns` turns.
 */
export async function settle(done?: () => boolean, turns = done === undefined ? 10 : 100_000): Promise<void> {
  for (let i = 0; i < turns && !(done?.() ?? false); i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** One read call seen by {@link SpyFs}. */
export interface ReadCall {
  readonly path: string;
  readonly position: number;
  readonly length: number;
}

/** The real file system, counting reads and syncs, and failing writes (or syncs) on demand. */
export class SpyFs implements LogFs {
  readonly reads: ReadCall[] = [];
  /** Each datasync of a segment: its path and the virtual time. */
  readonly syncs: { readonly path: string; readonly at: number }[] = [];
  /** Write calls to segment files. */
  segmentWrites = 0;
  /** Writes and syncs in progress. */
  busy = 0;
  /** When set, writes to the files it picks fail with its errno code. */
  failWrites: { readonly path: (path: string) => boolean; readonly code: string } | undefined;
  /** While true, writes to segments wait until {@link releaseWrite} lets them through, one by one. */
  holdWrites = false;
  private readonly held: (() => void)[] = [];

  constructor(private readonly clock?: VirtualClock) {}

  async open(path: string, mode: LogFileMode): Promise<LogFile> {
    const file = await nodeLogFs.open(path, mode);
    return {
      ...file,
      read: (buffer, length, position) => {
        this.reads.push({ path, position, length });
        return file.read(buffer, length, position);
      },
      write: (data) => this.spyWrite(path, () => file.write(data)),
      writev: (parts) => this.spyWrite(path, () => file.writev(parts)),
      datasync: async () => {
        if (path.endsWith('.seg')) this.syncs.push({ path, at: this.clock?.now() ?? 0 });
        this.busy += 1;
        try {
          await file.datasync();
        } finally {
          this.busy -= 1;
        }
      },
    };
  }
  /** One write call (`write` or `writev`) to `path`: held, failed or counted as set. */
  private async spyWrite(path: string, write: () => Promise<void>): Promise<void> {
    if (this.holdWrites && path.endsWith('.seg')) await new Promise<void>((resolve) => this.held.push(resolve));
    const fail = this.failWrites;
    if (fail !== undefined && fail.path(path)) throw Object.assign(new Error(`${fail.code}: no space left, write '${path}'`), { code: fail.code });
    if (path.endsWith('.seg')) this.segmentWrites += 1;
    this.busy += 1;
    try {
      await write();
    } finally {
      this.busy -= 1;
    }
  }

  /** Writes waiting while {@link holdWrites}. */
  get heldWrites(): number {
    return this.held.length;
  }
  /** Lets the oldest held write go on. */
  releaseWrite(): void {
    this.held.shift()?.();
  }
  readFile = nodeLogFs.readFile;
  rename = nodeLogFs.rename;
  unlink = nodeLogFs.unlink;
  /** Directories removed whole, in order. */
  readonly removedTrees: string[] = [];
  removeTree = (path: string): Promise<void> => {
    this.removedTrees.push(path);
    return nodeLogFs.removeTree(path);
  };
  fileSize = nodeLogFs.fileSize;
  mkdir = nodeLogFs.mkdir;
  readdir = nodeLogFs.readdir;
  freeBytes = nodeLogFs.freeBytes;
}

/** Every event of `log` after `afterSeq`, reading `budget` bytes at a time until the log has no more. */
export async function readAll(log: OutputLog, afterSeq = 0, budget = 256 * 1024): Promise<LogEvent[]> {
  const events: LogEvent[] = [];
  for (let cursor = afterSeq; ; ) {
    const read = await log.read(cursor, budget);
    events.push(...read.events);
    cursor = read.lastSeq;
    if (read.caughtUp || read.ended) return events;
  }
}

/** The events without their receipt time (to compare with what was appended). */
export const untimed = (events: readonly LogEvent[]): unknown[] =>
  events.map((event) => {
    if (event.type === 'failed' || event.type === 'truncated') return event;
    const { time: _time, ...rest } = event;
    return rest;
  });
