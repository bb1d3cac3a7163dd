/**
 * The host's output logs over one data directory: `DATA/processes/<environmentId>/<processId>/`
 * holds each process's log (segments, indexes, manifest) and its metadata. The store makes the logs of
 * new processes, lists the processes of before a restart with their last known state, opens their logs
 * for reading, and keeps the whole within a total bound and a retention.
 */
import type { Observable, SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, interval, Subject } from 'rxjs';
import type { LogWriteOperation } from '../../errors';
import { ClosedError, OutputLogError } from '../../errors';
import type { LogFs } from './log-fs';
import { errnoOf, nodeLogFs } from './log-fs';
import { OutputLog } from './output-log';
import type { LogHooks, OutputLogOptions } from './output-log-options';
import type { ProcessKey, ProcessLaunch, ProcessMeta } from './process-meta';
import { processDir } from './process-meta';
import type { StdinRecord } from './stdin-record';
import { readStdinRecord, writeStdinRecord } from './stdin-record';
import { findEntries, StoreEntry } from './store-entry';
import { evictionOrder, expired, trimOrder } from './store-eviction';

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Default cap of {@link OutputLogStoreOptions.totalBytes}: 10 GiB. */
export const DEFAULT_TOTAL_BYTES_CAP = 10 * 1024 * 1024 * 1024;
/** Default {@link OutputLogStoreOptions.retentionMs}: 7 days. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** Default {@link OutputLogStoreOptions.sweepIntervalMs}: 1 minute. */
export const DEFAULT_SWEEP_INTERVAL_MS = 60 * 1000;

/** Where the store keeps its logs and how much; the log options apply to every log it makes or opens. */
export interface OutputLogStoreOptions extends OutputLogOptions {
  /** The data directory (made if missing). */
  readonly dataDir: string;
  /**
   * The total bound of every log's segments: past it, whole logs go (released processes first, then
   * other ended ones, oldest first), then running logs lose middle segments (a running process never
   * loses its whole log).
   * @default the smaller of 10 GiB and half the space free on the data directory's file system at open
   */
  readonly totalBytes?: number;
  /**
   * How long the log of a process that stopped running is kept.
   * @default 604800000 (7 days)
   */
  readonly retentionMs?: number;
  /**
   * How often retention and the bound are checked besides when a log rolls a segment.
   * @default 60000
   */
  readonly sweepIntervalMs?: number;
}

/** The host's output logs (see the module's doc). Made by {@link OutputLogStore.open}; its owner calls `close()`. */
export class OutputLogStore {
  private readonly entries = new Map<string, StoreEntry>();
  private readonly failures = new Subject<OutputLogError>();
  private readonly syncs = new Subject<number>();
  private readonly scheduler: SchedulerLike;
  private readonly sweeping: Subscription;
  private enforcing: Promise<void> = Promise.resolve();
  private enforceQueued = false;
  private closed = false;
  /** Whole logs removed, ever: for the total bound, for retention. */
  private readonly evicted = { total: 0, retention: 0 };
  /** Segments the quota dropped from logs since removed. */
  private droppedBefore = 0;

  private constructor(
    private readonly options: OutputLogStoreOptions,
    /** The total bound in bytes, resolved at open. */ readonly totalBytes: number,
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.sweeping = interval(options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS, this.scheduler).subscribe(() => void this.enforce());
  }

  /**
   * Opens the store over `options.dataDir`: finds the processes of before (running ones become
   * `unknown`), resolves the total bound, applies retention and the bound once. Rejects with the file
   * system's error when the directory cannot be made or read.
   */
  static async open(options: OutputLogStoreOptions): Promise<OutputLogStore> {
    const fs = options.fs ?? nodeLogFs;
    await fs.mkdir(options.dataDir);
    const totalBytes = options.totalBytes ?? Math.min(DEFAULT_TOTAL_BYTES_CAP, Math.floor((await fs.freeBytes(options.dataDir)) / 2));
    const store = new OutputLogStore(options, totalBytes);
    const now = store.scheduler.now();
    for (const entry of await findEntries(fs, options.dataDir, now, (found, error) => store.report(found.meta.processId, 'metadata', error))) {
      store.entries.set(entry.dir, entry);
    }
    await store.enforce();
    return store;
  }

  /** Every failure of a log or of the store's own files (at most one per log): the host logs them. Completes on `close()`. */
  get failures$(): Observable<OutputLogError> {
    return this.failures.asObservable();
  }

  /**
   * What the host's metrics read: bytes and segment files of every log, and what went (ever): whole logs
   * for the total bound or retention, segments for a quota (or the bound).
   */
  get figures(): { readonly diskBytes: number; readonly segments: number; readonly evictions: Readonly<Record<'total' | 'retention' | 'quota', number>> } {
    let segments = 0;
    let quota = this.droppedBefore;
    for (const entry of this.entries.values()) {
      segments += entry.log?.segmentCount ?? 0;
      quota += entry.log?.droppedSegments ?? 0;
    }
    return { diskBytes: this.diskBytes, segments, evictions: { ...this.evicted, quota } };
  }

  /** Each fdatasync of a log's segment, as its wall-clock ms (the host's metrics). Completes on `close()`. */
  get syncs$(): Observable<number> {
    return this.syncs.asObservable();
  }

  /** Bytes of every log's segments. */
  get diskBytes(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.bytes;
    return total;
  }

  /** What the store knows of every process it holds: oldest first, then by environment and process id. */
  list(): ProcessMeta[] {
    const order = (a: ProcessMeta, b: ProcessMeta): number =>
      a.startedAt - b.startedAt || compare(a.environmentId, b.environmentId) || compare(a.processId, b.processId);
    return [...this.entries.values()].map((entry) => entry.meta).sort(order);
  }

  /** What the store knows of one process, if it holds it. */
  meta(key: ProcessKey): ProcessMeta | undefined {
    return this.entries.get(this.dirOf(key))?.meta;
  }

  /** Resolves once the metadata writes queued for `key` are done (at once for a process the store does not hold). Never rejects. */
  metaWritten(key: ProcessKey): Promise<void> {
    return this.entries.get(this.dirOf(key))?.settled() ?? Promise.resolve();
  }

  /**
   * A new log for a process that starts now (state `running`), taking appends at once; its files are
   * made in the background. A log the store held for the same key goes first. The store watches its
   * exit and close (state, exit code, times), its failure (`failures$`) and its growth (the bound).
   * Throws ClosedError once the store is closed.
   */
  create(key: ProcessKey, launch: ProcessLaunch = { argv: [], tty: false }): OutputLog {
    if (this.closed) throw new ClosedError('the output log store is closed');
    const fs = this.fs;
    const dir = this.dirOf(key);
    const previous = this.entries.get(dir);
    const gone = previous === undefined ? Promise.resolve() : this.removeEntry(previous);
    const made = gone.then(() => fs.mkdir(dir));
    const meta: ProcessMeta = { ...key, argv: [...launch.argv], tty: launch.tty, state: 'running', exitCode: null, startedAt: this.scheduler.now(), exitedAt: null, endedAt: null, released: false, lostReason: null };
    const entry = new StoreEntry(dir, meta, true, made);
    entry.update(fs, {}, (error) => this.report(key.processId, 'metadata', error));
    entry.log = OutputLog.create(dir, key.processId, this.options, this.hooksOf(entry), made);
    this.entries.set(dir, entry);
    return entry.log;
  }

  /**
   * The processes of `environmentId` that a restarted host may take back: those found `unknown` (they were
   * running when the host stopped) and not released.
   */
  adoptable(environmentId: string): ProcessMeta[] {
    return this.list().filter((meta) => meta.environmentId === environmentId && meta.state === 'unknown' && !meta.released);
  }

  /**
   * Takes back the log of a process of before that its executor still runs: the log is reopened
   * (recovered) and takes appends after its last record, in a new segment; the process is `running`
   * again and watched as one this host made. Undefined when the store does not hold it. Rejects with
   * OutputLogReadError when its files cannot be read, ClosedError once the store is closed.
   */
  async adopt(key: ProcessKey): Promise<OutputLog | undefined> {
    if (this.closed) throw new ClosedError('the output log store is closed');
    const dir = this.dirOf(key);
    const found = this.entries.get(dir);
    if (found === undefined) return undefined;
    const opened = await (found.opening ?? Promise.resolve(undefined)).catch(() => undefined);
    const entry = new StoreEntry(dir, { ...found.meta, state: 'running', endedAt: null, lostReason: null }, true);
    entry.log = await OutputLog.reopen(dir, key.processId, this.options, this.hooksOf(entry));
    await opened?.close();
    if (this.closed) {
      await entry.log.close();
      throw new ClosedError('the output log store is closed');
    }
    this.entries.set(dir, entry);
    entry.update(this.fs, {}, (error) => this.report(key.processId, 'metadata', error));
    return entry.log;
  }

  /** A process of before that could not be taken back: state `lost`, with why (it is listed so, its log stays readable). */
  markLost(key: ProcessKey, reason: string): void {
    const entry = this.entries.get(this.dirOf(key));
    if (entry === undefined || entry.meta.state === 'closed' || entry.meta.state === 'failed') return;
    this.update(entry, { state: 'lost', lostReason: reason, endedAt: entry.meta.endedAt ?? this.scheduler.now() });
  }

  /** What the store watches of a log it writes: its failure, its growth (the bound), its exit and close (state, times). */
  private hooksOf(entry: StoreEntry): LogHooks {
    return {
      onFailure: (error) => this.failures.next(error),
      onRoll: () => this.checkBound(),
      onSync: (ms) => {
        if (!this.syncs.closed) this.syncs.next(ms);
      },
      onLifecycle: (event) => {
        const now = this.scheduler.now();
        const patch: Partial<ProcessMeta> = event.type === 'exited' ? { state: 'exited', exitCode: event.exitCode, exitedAt: now } : { state: 'closed', endedAt: now };
        this.update(entry, patch);
      },
    };
  }

  /** Records how a process was started (its command line, its tty), when it was not known at `create`. */
  describe(key: ProcessKey, launch: ProcessLaunch): void {
    const entry = this.entries.get(this.dirOf(key));
    if (entry !== undefined) this.update(entry, { argv: [...launch.argv], tty: launch.tty });
  }

  /** Records who started a process through the operator API (an operator token's name, never the token). */
  noteStartedBy(key: ProcessKey, startedBy: string): void {
    const entry = this.entries.get(this.dirOf(key));
    if (entry !== undefined) this.update(entry, { startedBy });
  }

  /** The stdin record of a process the store holds (`stdin.json` in its directory), if one was written and reads as one. */
  async readStdin(key: ProcessKey): Promise<StdinRecord | undefined> {
    if (!this.entries.has(this.dirOf(key))) return undefined;
    return readStdinRecord(this.fs, this.dirOf(key));
  }

  /**
   * Replaces a process's stdin record, atomically, once its directory exists; nothing is written for a
   * process the store no longer holds. The caller writes one at a time per process. Rejects with the
   * file system's error.
   */
  async writeStdin(key: ProcessKey, record: StdinRecord): Promise<void> {
    const entry = this.entries.get(this.dirOf(key));
    if (entry === undefined) return;
    await entry.settled();
    if (!entry.removed) await writeStdinRecord(this.fs, entry.dir, record);
  }

  /**
   * The process's stream failed on the host's side: state `failed`; its log takes no more appends. Once
   * the store is closed it is not: the host stops and lets its executors go, their processes' streams
   * fail with it, and the processes stay `running` (`unknown` at the next start, to be taken back).
   */
  markFailed(key: ProcessKey): void {
    const entry = this.entries.get(this.dirOf(key));
    if (this.closed || entry === undefined || !entry.running) return;
    this.update(entry, { state: 'failed', endedAt: this.scheduler.now() });
    void entry.log?.seal();
  }

  /** The owner released the process's history: its log takes no more appends and is the first the bound removes. */
  release(key: ProcessKey): void {
    const entry = this.entries.get(this.dirOf(key));
    if (entry === undefined || entry.released) return;
    this.update(entry, { released: true });
    void entry.log?.seal();
  }

  /**
   * The log of a process the store holds, for reading: the one this host writes, or the one found on
   * disk, opened (recovered) once and shared. Undefined when the store does not hold the process.
   * Rejects with OutputLogReadError when the files cannot be read.
   */
  async openLog(key: ProcessKey): Promise<OutputLog | undefined> {
    const entry = this.entries.get(this.dirOf(key));
    if (entry === undefined) return undefined;
    if (entry.log !== undefined) return entry.log;
    entry.opening ??= OutputLog.open(entry.dir, entry.meta.processId, this.options).then((log) => (entry.log = log));
    return entry.opening;
  }

  /** Removes a process's log and metadata. Resolves when the files are gone (a failure goes to `failures$`). */
  async remove(key: ProcessKey): Promise<void> {
    const entry = this.entries.get(this.dirOf(key));
    if (entry !== undefined) await this.removeEntry(entry);
  }

  /**
   * Applies retention (logs of processes ended `retentionMs` ago go) and the total bound now. Runs
   * one at a time; resolves when done; never rejects.
   */
  enforce(): Promise<void> {
    if (this.enforceQueued) return this.enforcing;
    this.enforceQueued = true;
    this.enforcing = this.enforcing.then(() => {
      this.enforceQueued = false;
      return this.runEnforce();
    });
    return this.enforcing;
  }

  /** Writes and syncs what every open log took so far (a host that stops, before it lets its executors go). Never rejects. */
  async flush(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.log?.flush()));
  }

  /** Stops the sweep, closes every log (writing and syncing what they took), completes `failures$`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.sweeping.unsubscribe();
    await this.enforcing;
    for (const entry of this.entries.values()) {
      await (entry.opening ?? Promise.resolve()).catch(() => undefined);
      await entry.log?.close();
      await entry.settled();
    }
    this.failures.complete();
    this.syncs.complete();
  }

  private get fs(): LogFs {
    return this.options.fs ?? nodeLogFs;
  }

  private dirOf(key: ProcessKey): string {
    return processDir(this.options.dataDir, key);
  }

  private update(entry: StoreEntry, patch: Partial<ProcessMeta>): void {
    entry.update(this.fs, patch, (error) => this.report(entry.meta.processId, 'metadata', error));
  }

  private report(processId: string, operation: LogWriteOperation, error: unknown): void {
    if (!this.failures.closed) this.failures.next(new OutputLogError(processId, errnoOf(error), operation));
  }

  private checkBound(): void {
    if (this.diskBytes > this.totalBytes) void this.enforce();
  }

  private async runEnforce(): Promise<void> {
    for (const entry of expired(this.entries.values(), this.scheduler.now(), this.options.retentionMs ?? DEFAULT_RETENTION_MS)) {
      this.evicted.retention += 1;
      await this.removeEntry(entry);
    }
    let total = this.diskBytes;
    for (const entry of evictionOrder(this.entries.values())) {
      if (total <= this.totalBytes) return;
      total -= entry.bytes;
      this.evicted.total += 1;
      await this.removeEntry(entry);
    }
    for (const entry of trimOrder(this.entries.values())) {
      if (total <= this.totalBytes) return;
      const log = entry.log;
      if (log !== undefined) total -= await log.trimTo(Math.max(0, log.diskBytes - (total - this.totalBytes)));
    }
  }

  /** Takes the entry out of the store and removes its directory. Never rejects (a failure goes to `failures$`). */
  private async removeEntry(entry: StoreEntry): Promise<void> {
    if (this.entries.get(entry.dir) === entry) this.entries.delete(entry.dir);
    if (entry.removed) return;
    entry.removed = true;
    this.droppedBefore += entry.log?.droppedSegments ?? 0;
    await entry.settled();
    try {
      const log = entry.log ?? (await entry.opening?.catch(() => undefined));
      if (log !== undefined) await log.remove();
      else await this.fs.removeTree(entry.dir);
    } catch (error: unknown) {
      this.report(entry.meta.processId, 'remove', error);
    }
  }
}
