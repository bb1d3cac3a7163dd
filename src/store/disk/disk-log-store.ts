/**
 * The log store port over a data directory: `DATA/processes/<environmentId>/<processId>/` holds each
 * process's log (segments, indexes, manifest: see `./log`) and its metadata (`./meta-file`). It makes
 * the logs of new processes, lists the processes of before a restart with their last known state, takes
 * them back, opens their logs for reading at each reader's pace, and keeps the whole within a total
 * bound and a retention (`./store-bounds`).
 */
import { constants as fsConstants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { Observable, SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, interval, Subject } from 'rxjs';
import type { LogWriteOperation } from '../../errors';
import { ClosedError, OutputLogError, StaleEpochError } from '../../errors';
import type { HistoryFactory } from '../../exec/output-history';
import { errnoOf } from '../errno';
import type { HistoriesOptions, LogPressure, LogStore, LogStoreCapabilities, LogStoreFailure, LogStoreFigures } from '../log-store';
import type { ProcessKey, ProcessLaunch, ProcessMeta } from '../process-meta';
import { startingMeta } from '../process-meta';
import { DiskHistory } from './disk-history';
import type { LogFs } from './log/log-fs';
import { nodeLogFs } from './log/log-fs';
import { OutputLog } from './log/output-log';
import type { LogHooks, OutputLogOptions } from './log/output-log-options';
import { processDir } from './meta-file';
import { StoreBounds } from './store-bounds';
import { findEntries, StoreEntry } from './store-entry';
import { watchPressure } from './log-pressure';

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Default cap of {@link DiskLogStoreOptions.totalBytes}: 10 GiB. */
export const DEFAULT_TOTAL_BYTES_CAP = 10 * 1024 * 1024 * 1024;
/** Default {@link DiskLogStoreOptions.retentionMs}: 7 days. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** Default {@link DiskLogStoreOptions.sweepIntervalMs}: 1 minute. */
export const DEFAULT_SWEEP_INTERVAL_MS = 60 * 1000;

/** Where the store keeps its logs and how much; the log options apply to every log it makes or opens. */
export interface DiskLogStoreOptions extends OutputLogOptions {
  /** The data directory (made if missing). */
  readonly dataDir: string;
  /**
   * The total bound of every log's segments: past it, whole logs go (released processes first, then
   * other ended ones, oldest first), then running logs lose middle segments (a running process never
   * loses its whole log).
   * @default the smaller of 10 GiB and half the space free on the data directory's file system at open
   */
  readonly totalBytes?: number;
  /** How long the log of a process that stopped running is kept. @default 604800000 (7 days) */
  readonly retentionMs?: number;
  /** How often retention and the bound are checked besides when a log rolls a segment. @default 60000 */
  readonly sweepIntervalMs?: number;
}

/** What the disk store can do: everything the port names. */
const CAPABILITIES: LogStoreCapabilities = { ownPace: true, durable: true, keepsHead: true, writeFailures: true, figures: true, listsEnded: true };

/** The host's output logs on disk (see the module's doc). Made by {@link DiskLogStore.open}; its owner calls `close()`. */
export class DiskLogStore implements LogStore {
  readonly capabilities = CAPABILITIES;
  private readonly entries = new Map<string, StoreEntry>();
  private readonly failures = new Subject<LogStoreFailure>();
  private readonly syncs = new Subject<number>();
  private readonly pressures = new Subject<LogPressure>();
  private readonly scheduler: SchedulerLike;
  private readonly sweeping: Subscription;
  private readonly bounds: StoreBounds;
  /** Each environment's newest writer epoch: a log written at an older one is fenced. */
  private readonly epochs = new Map<string, number>();
  /** Logs taken back (`adopt`), by directory, until their environment's next history factory continues them. */
  private readonly adopted = new Map<string, OutputLog>();
  /** Segments the quota dropped from logs since removed. */
  private droppedBefore = 0;
  private closed = false;

  private constructor(
    private readonly options: DiskLogStoreOptions,
    totalBytes: number,
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    const store = { entries: () => this.entries.values(), now: () => this.scheduler.now(), removeEntry: (entry: StoreEntry) => this.removeEntry(entry) };
    this.bounds = new StoreBounds(store, totalBytes, options.retentionMs ?? DEFAULT_RETENTION_MS);
    this.sweeping = interval(options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS, this.scheduler).subscribe(() => void this.bounds.enforce());
  }

  /**
   * Opens the store over `options.dataDir`: finds the processes of before (running ones become
   * `unknown`), resolves the total bound, applies retention and the bound once. Rejects with the file
   * system's error when the directory cannot be made or read.
   */
  static async open(options: DiskLogStoreOptions): Promise<DiskLogStore> {
    const fs = options.fs ?? nodeLogFs;
    await fs.mkdir(options.dataDir);
    const totalBytes = options.totalBytes ?? Math.min(DEFAULT_TOTAL_BYTES_CAP, Math.floor((await fs.freeBytes(options.dataDir)) / 2));
    const store = new DiskLogStore(options, totalBytes);
    const now = store.scheduler.now();
    for (const entry of await findEntries(fs, options.dataDir, now, (found, error) => store.report(found.meta.processId, 'metadata', error))) {
      store.entries.set(entry.dir, entry);
    }
    await store.bounds.enforce();
    return store;
  }

  /** The total bound in bytes, resolved at open. */
  get totalBytes(): number {
    return this.bounds.totalBytes;
  }

  get failures$(): Observable<LogStoreFailure> {
    return this.failures.asObservable();
  }

  get syncs$(): Observable<number> {
    return this.syncs.asObservable();
  }

  get pressure$(): Observable<LogPressure> {
    return this.pressures.asObservable();
  }

  get figures(): LogStoreFigures {
    let segments = 0;
    let quota = this.droppedBefore;
    for (const entry of this.entries.values()) {
      segments += entry.log?.segmentCount ?? 0;
      quota += entry.log?.droppedSegments ?? 0;
    }
    return { diskBytes: this.diskBytes, segments, evictions: { ...this.bounds.evicted, quota } };
  }

  /** Bytes of every log's segments. */
  get diskBytes(): number {
    return this.bounds.diskBytes;
  }

  histories(environmentId: string, { epoch }: HistoriesOptions): HistoryFactory {
    this.fence(environmentId, epoch);
    return (processId, launch) => {
      const key = { environmentId, processId };
      const dir = this.dirOf(key);
      const adopted = this.adopted.get(dir);
      this.adopted.delete(dir);
      const log = adopted ?? this.create(key, launch, epoch);
      return new DiskHistory(log, { onFailed: () => void this.markFailed(key), onRelease: () => void this.release(key), ready: () => this.metaWritten(key) });
    };
  }

  /**
   * A new log for a process that starts now (state `running`), taking appends at once; its files are
   * made in the background. A log the store held for the same key goes first. The store watches its
   * exit and close, its failure (`failures$`), its backpressure (`pressure$`) and its growth (the bound).
   * Throws ClosedError once the store is closed. (The writer side the host uses is `histories`.)
   */
  create(key: ProcessKey, launch: ProcessLaunch = { argv: [], tty: false }, epoch = this.epochs.get(key.environmentId) ?? 0): OutputLog {
    if (this.closed) throw new ClosedError('the output log store is closed');
    const dir = this.dirOf(key);
    const previous = this.entries.get(dir);
    const made = (previous === undefined ? Promise.resolve() : this.removeEntry(previous)).then(() => this.fs.mkdir(dir));
    const entry = new StoreEntry(dir, startingMeta(key, launch, this.scheduler.now()), true, made, epoch);
    this.update(entry, {});
    entry.log = OutputLog.create(dir, key.processId, this.options, this.hooksOf(entry), made);
    this.entries.set(dir, entry);
    this.watch(entry, entry.log);
    return entry.log;
  }

  async openReader(key: ProcessKey): Promise<OutputLog | undefined> {
    return this.openLog(key);
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

  list(): Promise<readonly ProcessMeta[]> {
    return Promise.resolve(this.listNow());
  }

  /** {@link list}, at once. */
  listNow(): ProcessMeta[] {
    const order = (a: ProcessMeta, b: ProcessMeta): number =>
      a.startedAt - b.startedAt || compare(a.environmentId, b.environmentId) || compare(a.processId, b.processId);
    return [...this.entries.values()].map((entry) => entry.meta).sort(order);
  }

  meta(key: ProcessKey): Promise<ProcessMeta | undefined> {
    return Promise.resolve(this.entries.get(this.dirOf(key))?.meta);
  }

  describe(key: ProcessKey, launch: ProcessLaunch): Promise<void> {
    return this.patch(key, { argv: [...launch.argv], tty: launch.tty });
  }

  noteStartedBy(key: ProcessKey, startedBy: string): Promise<void> {
    return this.patch(key, { startedBy });
  }

  release(key: ProcessKey): Promise<void> {
    const entry = this.entries.get(this.dirOf(key));
    if (entry === undefined || entry.released) return Promise.resolve();
    this.update(entry, { released: true });
    void entry.log?.seal();
    return entry.settled();
  }

  async remove(key: ProcessKey): Promise<void> {
    const entry = this.entries.get(this.dirOf(key));
    if (entry !== undefined) await this.removeEntry(entry);
  }

  enforce(): Promise<void> {
    return this.bounds.enforce();
  }

  adoptable(environmentId: string): Promise<readonly ProcessMeta[]> {
    return Promise.resolve(this.listNow().filter((meta) => meta.environmentId === environmentId && meta.state === 'unknown' && !meta.released));
  }

  async adopt(key: ProcessKey, epoch: number): Promise<number | undefined> {
    if (this.closed) throw new ClosedError('the output log store is closed');
    const dir = this.dirOf(key);
    const taken = this.adopted.get(dir);
    if (taken !== undefined) return taken.lastSeq;
    const found = this.entries.get(dir);
    if (found === undefined) return undefined;
    this.fence(key.environmentId, epoch);
    const opened = await (found.opening ?? Promise.resolve(undefined)).catch(() => undefined);
    const entry = new StoreEntry(dir, { ...found.meta, state: 'running', endedAt: null, lostReason: null }, true, Promise.resolve(), epoch);
    entry.log = await OutputLog.reopen(dir, key.processId, this.options, this.hooksOf(entry));
    await opened?.close();
    if (this.closed) {
      await entry.log.close();
      throw new ClosedError('the output log store is closed');
    }
    this.entries.set(dir, entry);
    this.update(entry, {});
    this.adopted.set(dir, entry.log);
    this.watch(entry, entry.log);
    return entry.log.lastSeq;
  }

  async markLost(key: ProcessKey, reason: string): Promise<void> {
    const dir = this.dirOf(key);
    const entry = this.entries.get(dir);
    const adopted = this.adopted.get(dir);
    this.adopted.delete(dir);
    if (entry !== undefined && entry.meta.state !== 'closed' && entry.meta.state !== 'failed') {
      this.update(entry, { state: 'lost', lostReason: reason, endedAt: entry.meta.endedAt ?? this.scheduler.now() });
    }
    await adopted?.seal();
    await entry?.settled();
  }

  /**
   * The process's stream failed on the host's side: state `failed`; its log takes no more appends. Once
   * the store is closed it is not: the host stops and lets its executors go, their processes' streams
   * fail with it, and the processes stay `running` (`unknown` at the next start, to be taken back).
   */
  markFailed(key: ProcessKey): Promise<void> {
    const entry = this.entries.get(this.dirOf(key));
    if (this.closed || entry === undefined || !entry.running) return Promise.resolve();
    this.update(entry, { state: 'failed', endedAt: this.scheduler.now() });
    void entry.log?.seal();
    return entry.settled();
  }

  metaWritten(key: ProcessKey): Promise<void> {
    return this.entries.get(this.dirOf(key))?.settled() ?? Promise.resolve();
  }

  /** Why the store cannot take writes: its data dir is not writable (one `access`, no write: a probe stays cheap). */
  unready(): Promise<string | undefined> {
    return access(this.options.dataDir, fsConstants.W_OK).then(
      () => undefined,
      () => 'data dir not writable',
    );
  }

  async flush(): Promise<void> {
    await Promise.all([...this.entries.values()].map((entry) => entry.log?.flush()));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.sweeping.unsubscribe();
    await this.bounds.settled();
    for (const entry of this.entries.values()) {
      await (entry.opening ?? Promise.resolve()).catch(() => undefined);
      await entry.log?.close();
      await entry.settled();
    }
    this.failures.complete();
    this.syncs.complete();
    this.pressures.complete();
  }

  private get fs(): LogFs {
    return this.options.fs ?? nodeLogFs;
  }

  private dirOf(key: ProcessKey): string {
    return processDir(this.options.dataDir, key);
  }

  /** A newer writer for `environmentId`: the logs written at an older epoch take no more appends, and each is reported. */
  private fence(environmentId: string, epoch: number): void {
    const current = this.epochs.get(environmentId) ?? 0;
    if (epoch <= current) return;
    this.epochs.set(environmentId, epoch);
    for (const entry of this.entries.values()) {
      if (entry.meta.environmentId !== environmentId || entry.epoch >= epoch || entry.log?.end !== undefined || !entry.running) continue;
      void entry.log?.seal();
      if (!this.failures.closed) this.failures.next(new StaleEpochError(environmentId, entry.epoch, epoch));
    }
  }

  /** What the store watches of a log it writes: its failure, its growth (the bound), its exit and close (state, times). */
  private hooksOf(entry: StoreEntry): LogHooks {
    return {
      onFailure: (error) => this.failures.next(error),
      onRoll: () => this.bounds.check(),
      onSync: (ms) => {
        if (!this.syncs.closed) this.syncs.next(ms);
      },
      onLifecycle: (event) => {
        const now = this.scheduler.now();
        this.update(entry, event.type === 'exited' ? { state: 'exited', exitCode: event.exitCode, exitedAt: now } : { state: 'closed', endedAt: now });
      },
    };
  }

  /** Hands a writing log's backpressure to `pressure$`, and fences it at once when its writer's epoch is already stale. */
  private watch(entry: StoreEntry, log: OutputLog): void {
    watchPressure(log, { environmentId: entry.meta.environmentId, processId: entry.meta.processId }, (pressure) => {
      if (!this.pressures.closed) this.pressures.next(pressure);
    });
    const current = this.epochs.get(entry.meta.environmentId) ?? 0;
    if (entry.epoch < current) {
      void log.seal();
      this.failures.next(new StaleEpochError(entry.meta.environmentId, entry.epoch, current));
    }
  }

  private patch(key: ProcessKey, patch: Partial<ProcessMeta>): Promise<void> {
    const entry = this.entries.get(this.dirOf(key));
    if (entry === undefined) return Promise.resolve();
    this.update(entry, patch);
    return entry.settled();
  }

  private update(entry: StoreEntry, patch: Partial<ProcessMeta>): void {
    entry.update(this.fs, patch, (error) => this.report(entry.meta.processId, 'metadata', error));
  }

  private report(processId: string, operation: LogWriteOperation, error: unknown): void {
    if (!this.failures.closed) this.failures.next(new OutputLogError(processId, errnoOf(error), operation));
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
