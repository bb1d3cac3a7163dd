/**
 * One process as the output log store holds it: its directory, its metadata (written in order, the
 * latest state each time), and its log once made or opened. Also how the store finds the processes of
 * before in its data directory.
 */
import { join } from 'node:path';
import type { ProcessMeta } from '../process-meta';
import { endedAt, stillRunning } from '../process-meta';
import type { LogFs } from './log/log-fs';
import type { OutputLog } from './log/output-log';
import { parseSegmentName } from './log/segment';
import { idOfComponent, readMeta, writeMeta } from './meta-file';
import type { EvictionView } from './store-eviction';

/** A process the store holds (see the module's doc). */
export class StoreEntry implements EvictionView {
  /** Its log: made by this host (it takes appends) or opened from disk (sealed). */
  log: OutputLog | undefined;
  /** An open of its log from disk in progress. */
  opening: Promise<OutputLog> | undefined;
  /** Bytes of its segments on disk, as found at start (its log's own count once it has one). */
  foundBytes = 0;
  /** Removed from the store: nothing more is written for it. */
  removed = false;
  private writes: Promise<void>;

  constructor(
    /** Its directory. */ readonly dir: string,
    /** What the store knows about it. */ public meta: ProcessMeta,
    /** Made by this host (it can be running); false for the processes found at start. */ readonly live: boolean,
    /** Resolves when its directory exists (a previous log of the same key is gone first). */ ready: Promise<void> = Promise.resolve(),
    /** The epoch its log is written at (0 for the processes found at start: nobody writes them); a retried take-back raises it. */ public epoch = 0,
  ) {
    this.writes = ready;
  }

  /** The process still runs on this host. */
  get running(): boolean {
    return this.live && stillRunning(this.meta);
  }

  /** Its owner released its history. */
  get released(): boolean {
    return this.meta.released;
  }

  /** When it stopped running. */
  get endedAt(): number {
    return endedAt(this.meta);
  }

  /** Bytes of its log on disk. */
  get bytes(): number {
    return this.log?.diskBytes ?? this.foundBytes;
  }

  /**
   * Changes the metadata and queues its write (after the ones before; each writes the latest state).
   * A failed write goes to `failed`, with the file system's error.
   */
  update(fs: LogFs, patch: Partial<ProcessMeta>, failed: (error: unknown) => void): void {
    this.meta = { ...this.meta, ...patch };
    this.writes = this.writes.then(
      () => (this.removed ? undefined : writeMeta(fs, this.dir, this.meta).catch(failed)),
      () => undefined, // the directory could not be made: the log reports that
    );
  }

  /** Resolves when the queued metadata writes are done. Never rejects. */
  settled(): Promise<void> {
    return this.writes.catch(() => undefined);
  }
}

/**
 * The processes found under `<dataDir>/processes`: their metadata (a process that was running becomes
 * `unknown`, ended `now`) and the bytes of their segments. A directory without readable metadata is
 * listed with what its path tells (its ids), as `unknown`.
 */
export async function findEntries(fs: LogFs, dataDir: string, now: number, failed: (entry: StoreEntry, error: unknown) => void): Promise<StoreEntry[]> {
  const root = join(dataDir, 'processes');
  const found: StoreEntry[] = [];
  for (const environment of await fs.readdir(root)) {
    const environmentId = idOfComponent(environment);
    if (environmentId === undefined) continue;
    for (const process of await fs.readdir(join(root, environment))) {
      const processId = idOfComponent(process);
      if (processId === undefined) continue;
      const dir = join(root, environment, process);
      const names = await fs.readdir(dir);
      const meta = (await readMeta(fs, dir)) ?? placeholder(environmentId, processId, now);
      const entry = new StoreEntry(dir, meta, false);
      if (stillRunning(meta)) entry.update(fs, { state: 'unknown', endedAt: now }, (error) => failed(entry, error));
      for (const name of names) if (parseSegmentName(name) !== undefined) entry.foundBytes += (await fs.fileSize(join(dir, name))) ?? 0;
      found.push(entry);
    }
  }
  return found;
}

const placeholder = (environmentId: string, processId: string, now: number): ProcessMeta => ({
  environmentId,
  processId,
  argv: [],
  tty: false,
  state: 'unknown',
  exitCode: null,
  startedAt: now,
  exitedAt: null,
  endedAt: now,
  released: false,
  lostReason: null,
});
