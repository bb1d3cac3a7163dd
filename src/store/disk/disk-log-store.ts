/**
 * The log store port over a data directory: `DATA/processes/<environmentId>/<processId>/` holds each
 * process's log (segments, indexes, manifest: see `./log`) and its metadata (`./meta-file`). It makes
 * the logs of new processes, lists the processes of before a restart with their last known state, takes
 * them back, opens their logs for reading at each reader's pace, and keeps the whole within a total
 * bound and a retention (`./store-bounds`).
 */
import { constants as fsConstants } from 'node:fs';
import { access } from 'node:fs/promises';
import { asyncScheduler, interval, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import { ClosedError } from '../../errors';
import type { HistoryFactory } from '../../exec/output-history';
import type { HistoriesOptions, LogPressure, LogStore, LogStoreCapabilities, LogStoreFailure, LogStoreFigures } from '../log-store';
import type { ProcessKey, ProcessLaunch, ProcessMeta } from '../process-meta';
import { listOrder, startingMeta } from '../process-meta';
import { DiskHistory } from './disk-history';
import type { LogFs } from './log/log-fs';
import { nodeLogFs } from './log/log-fs';
import { OutputLog } from './log/output-log';
import type { DiskLogStoreOptions } from './disk-log-options';
import { DEFAULT_RETENTION_MS, DEFAULT_SWEEP_INTERVAL_MS, DEFAULT_TOTAL_BYTES_CAP } from './disk-log-options';
import { processDir } from './meta-file';
import { StoreBounds } from './store-bounds';
import { StoreEntries } from './store-entries';
import { findEntries, StoreEntry } from './store-entry';

/** What the disk store can do: everything the port names. */
const CAPABILITIES: LogStoreCapabilities = { ownPace: true, durable: true, keepsHead: true, writeFailures: true, figures: true, listsEnded: true };

/** The host's output logs on disk (see the module's doc). Made by {@link DiskLogStore.open}; its owner calls `close()`. */
export class DiskLogStore implements LogStore {
  readonly capabilities = CAPABILITIES;
  private readonly scheduler: SchedulerLike;
  private readonly sweeping: Subscription;
  private readonly bounds: StoreBounds;
  private readonly held: StoreEntries;
  /** Logs taken back (`adopt`), by directory, until their environment's next history factory continues them. */
  private readonly adopted = new Map<string, OutputLog>();
  private closed = false;

  private constructor(
    private readonly options: DiskLogStoreOptions,
    totalBytes: number,
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.held = new StoreEntries(options.fs ?? nodeLogFs, this.scheduler, () => this.bounds.check());
    const store = { entries: () => this.entries.values(), now: () => this.scheduler.now(), removeEntry: (entry: StoreEntry) => this.held.remove(entry) };
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
    for (const entry of await findEntries(fs, options.dataDir, now, (found, error) => store.held.report(found.meta.processId, 'metadata', error))) {
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
    return this.held.failures.asObservable();
  }

  get syncs$(): Observable<number> {
    return this.held.syncs.asObservable();
  }

  get pressure$(): Observable<LogPressure> {
    return this.held.pressures.asObservable();
  }

  get figures(): LogStoreFigures {
    let segments = 0;
    let quota = this.held.droppedBefore;
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
    this.held.fence(environmentId, epoch);
    return (processId, launch) => {
      const key = { environmentId, processId };
      const dir = this.dirOf(key);
      const adopted = this.adopted.get(dir);
      this.adopted.delete(dir);
      const log = adopted ?? this.create(key, launch, epoch);
      // Lost with its executor's session: `lost`, saying why; any other failure `failed`. Never ran: nothing left (unless closed).
      const onFailed = (lost: string | undefined): void => void (lost === undefined ? this.markFailed(key) : this.markLost(key, lost));
      const onDiscard = (): void => void (this.closed || this.remove(key).catch(() => undefined));
      return new DiskHistory(log, { onFailed, onRelease: () => void this.release(key), onDiscard, ready: () => this.metaWritten(key) });
    };
  }

  /**
   * A new log for a process that starts now (state `running`), taking appends at once; its files are
   * made in the background. A log the store held for the same key goes first. The store watches its
   * exit and close, its failure (`failures$`), its backpressure (`pressure$`) and its growth (the bound).
   * Throws ClosedError once the store is closed. (The writer side the host uses is `histories`.)
   */
  create(key: ProcessKey, launch: ProcessLaunch = { argv: [], tty: false }, epoch = this.held.epochOf(key.environmentId)): OutputLog {
    if (this.closed) throw new ClosedError('the output log store is closed');
    const dir = this.dirOf(key);
    const previous = this.entries.get(dir);
    const made = (previous === undefined ? Promise.resolve() : this.held.remove(previous)).then(() => this.fs.mkdir(dir));
    const entry = new StoreEntry(dir, startingMeta(key, launch, this.scheduler.now()), true, made, epoch);
    this.update(entry, {});
    entry.log = OutputLog.create(dir, key.processId, this.options, this.held.hooksOf(entry), made);
    this.entries.set(dir, entry);
    this.held.watch(entry, entry.log);
    return entry.log;
  }

  /**
   * The log of a process the store holds, for reading: the one this host writes, or the one found on
   * disk, opened (recovered) once and shared. Undefined when the store does not hold the process.
   * Rejects with OutputLogReadError when the files cannot be read.
   */
  async openReader(key: ProcessKey): Promise<OutputLog | undefined> {
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
    return [...this.entries.values()].map((entry) => entry.meta).sort(listOrder);
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
    // Once closed, the host is stopping and lets its executors go: what it releases then (a stdin feeder it
    // stops) is taken back as it was by the host that comes next.
    if (this.closed || entry === undefined || entry.released) return Promise.resolve();
    this.update(entry, { released: true });
    void entry.log?.seal();
    return entry.settled();
  }

  async remove(key: ProcessKey): Promise<void> {
    const entry = this.entries.get(this.dirOf(key));
    if (entry !== undefined) await this.held.remove(entry);
  }

  enforce(): Promise<void> {
    return this.bounds.enforce();
  }

  adoptable(environmentId: string): Promise<readonly ProcessMeta[]> {
    const taking = (meta: ProcessMeta): boolean => meta.state === 'unknown' || this.adopted.has(this.dirOf(meta));
    return Promise.resolve(this.listNow().filter((meta) => meta.environmentId === environmentId && !meta.released && taking(meta)));
  }

  async adopt(key: ProcessKey, epoch: number): Promise<number | undefined> {
    if (this.closed) throw new ClosedError('the output log store is closed');
    const dir = this.dirOf(key);
    const taken = this.adopted.get(dir);
    if (taken !== undefined) {
      // Taken back again (the attempt before failed, its executor re-dialled): it goes on at the new epoch.
      const entry = this.entries.get(dir);
      if (entry !== undefined) entry.epoch = Math.max(entry.epoch, epoch);
      this.held.fence(key.environmentId, epoch);
      return taken.lastSeq;
    }
    const found = this.entries.get(dir);
    if (found === undefined) return undefined;
    this.held.fence(key.environmentId, epoch);
    const opened = await (found.opening ?? Promise.resolve(undefined)).catch(() => undefined);
    // Its metadata writes go after those of the entry it replaces (its `unknown`, written at open, may be on its way).
    const entry = new StoreEntry(dir, { ...found.meta, state: 'running', endedAt: null, lostReason: null }, true, found.settled(), epoch);
    entry.log = await OutputLog.reopen(dir, key.processId, this.options, this.held.hooksOf(entry));
    await opened?.close();
    if (this.closed) {
      await entry.log.close();
      throw new ClosedError('the output log store is closed');
    }
    this.entries.set(dir, entry);
    this.update(entry, {});
    this.adopted.set(dir, entry.log);
    this.held.watch(entry, entry.log);
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
    this.held.complete();
  }

  private get fs(): LogFs {
    return this.options.fs ?? nodeLogFs;
  }

  private dirOf(key: ProcessKey): string {
    return processDir(this.options.dataDir, key);
  }

  private patch(key: ProcessKey, patch: Partial<ProcessMeta>): Promise<void> {
    const entry = this.entries.get(this.dirOf(key));
    if (entry === undefined) return Promise.resolve();
    this.update(entry, patch);
    return entry.settled();
  }

  private get entries(): Map<string, StoreEntry> {
    return this.held.byDir;
  }

  private update(entry: StoreEntry, patch: Partial<ProcessMeta>): void {
    this.held.update(entry, patch);
  }
}
