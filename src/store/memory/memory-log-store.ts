/**
 * The log store port in memory: the bounded histories a host keeps with `--data-dir none` (each
 * process's `EventHistory` within its bounds, each environment generation's within one byte budget), and
 * what it knows of each process while a live environment holds its history. Nothing outlives the host.
 *
 * Its readers are live ({@link LiveLogReader}): a history drops its oldest events at its bound rather
 * than hold the executor, so a reader that falls behind gets one `truncated` marker, and the host cuts
 * a stream that cannot keep up. It keeps no files: no write fails, nothing syncs, nothing presses back.
 */
import type { Observable, SchedulerLike } from 'rxjs';
import { asyncScheduler, EMPTY, Subject } from 'rxjs';
import { ClosedError, StaleEpochError } from '../../errors';
import { boundedHistories, DEFAULT_TOTAL_HISTORY_BYTES } from '../../exec/bounded-histories';
import type { HistoryFactory } from '../../exec/output-history';
import type { HistoriesOptions, LiveLogReader, LogPressure, LogStore, LogStoreCapabilities, LogStoreFailure } from '../log-store';
import type { ProcessKey, ProcessLaunch, ProcessMeta } from '../process-meta';
import { keyOf, listOrder, startingMeta } from '../process-meta';
import type { MemoryEntry } from './watched-history';
import { WatchedHistory } from './watched-history';

/** Options of {@link MemoryLogStore}. */
export interface MemoryLogStoreOptions {
  /** Each process's bounds: events and output bytes its history keeps. @default 256 events, 1 MiB */
  readonly processHistory?: {
    /** Events each history keeps. @default 256 */
    readonly historyEvents?: number;
    /** Output payload bytes each history keeps. @default 1048576 */
    readonly historyBytes?: number;
  };
  /** What one environment generation's histories hold together. @default 67108864 (64 MiB) */
  readonly totalHistoryBytes?: number;
  /** The factory of each generation's histories, instead of bounded ones (an environment manager option's own). @default bounded by the two above */
  readonly outputHistory?: HistoryFactory;
  /** The clock of the processes' start and end times. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/** What memory can do (see the port's capabilities). */
const CAPABILITIES: LogStoreCapabilities = { ownPace: false, durable: false, keepsHead: false, writeFailures: false, figures: false, listsEnded: false };

/**
 * A host's output in memory (see the module's doc). A process is held from its history's making until
 * it is released, fails, or is removed; then the history belongs to its process alone.
 */
export class MemoryLogStore implements LogStore {
  readonly capabilities = CAPABILITIES;
  readonly figures = undefined;
  readonly syncs$: Observable<number> = EMPTY;
  readonly pressure$: Observable<LogPressure> = EMPTY;
  private readonly entries = new Map<string, MemoryEntry>();
  private readonly epochs = new Map<string, number>();
  private readonly failures = new Subject<LogStoreFailure>();
  private readonly scheduler: SchedulerLike;
  private closed = false;

  constructor(private readonly options: MemoryLogStoreOptions = {}) {
    this.scheduler = options.scheduler ?? asyncScheduler;
  }

  /** Only stale writers refused (memory has no write to fail). Completes on `close()`. */
  get failures$(): Observable<LogStoreFailure> {
    return this.failures.asObservable();
  }

  histories(environmentId: string, { epoch }: HistoriesOptions): HistoryFactory {
    this.fence(environmentId, epoch);
    const make = this.options.outputHistory ?? boundedHistories(this.options.processHistory, this.options.totalHistoryBytes ?? DEFAULT_TOTAL_HISTORY_BYTES);
    return (processId, launch) => {
      if (this.closed) throw new ClosedError('the output log store is closed');
      const key = { environmentId, processId };
      const entry: MemoryEntry = { meta: startingMeta(key, launch ?? { argv: [], tty: false }, this.scheduler.now()), epoch, history: make(processId, launch), fenced: false };
      this.entries.set(keyOf(key), entry);
      if (epoch < (this.epochs.get(environmentId) ?? 0)) this.refuse(entry);
      return new WatchedHistory(entry, {
        now: () => this.scheduler.now(),
        drop: () => {
          if (this.entries.get(keyOf(key)) === entry) this.entries.delete(keyOf(key));
        },
      });
    };
  }

  openReader(key: ProcessKey): Promise<LiveLogReader | undefined> {
    const entry = this.entries.get(keyOf(key));
    return Promise.resolve(entry === undefined ? undefined : { pace: 'live', history: entry.history });
  }

  list(): Promise<readonly ProcessMeta[]> {
    return Promise.resolve([...this.entries.values()].map((entry) => entry.meta).sort(listOrder));
  }

  meta(key: ProcessKey): Promise<ProcessMeta | undefined> {
    return Promise.resolve(this.entries.get(keyOf(key))?.meta);
  }

  describe(key: ProcessKey, launch: ProcessLaunch): Promise<void> {
    return this.patch(key, { argv: [...launch.argv], tty: launch.tty });
  }

  noteStartedBy(key: ProcessKey, startedBy: string): Promise<void> {
    return this.patch(key, { startedBy });
  }

  /** The history is released: the store lets go of it (its process still holds it). */
  release(key: ProcessKey): Promise<void> {
    this.entries.delete(keyOf(key));
    return Promise.resolve();
  }

  /** Lets go of a process: its history is released (live subscribers go on; later ones get a marker). */
  remove(key: ProcessKey): Promise<void> {
    const entry = this.entries.get(keyOf(key));
    this.entries.delete(keyOf(key));
    entry?.history.release();
    return Promise.resolve();
  }

  /** Nothing to do: every history is within its bounds as it is appended to. */
  enforce(): Promise<void> {
    return Promise.resolve();
  }

  /** None: nothing of before a restart is in memory. */
  adoptable(): Promise<readonly ProcessMeta[]> {
    return Promise.resolve([]);
  }

  /** Undefined: memory holds no log of before a restart. */
  adopt(): Promise<number | undefined> {
    return this.closed ? Promise.reject(new ClosedError('the output log store is closed')) : Promise.resolve(undefined);
  }

  markLost(key: ProcessKey, reason: string): Promise<void> {
    return this.patch(key, { state: 'lost', lostReason: reason, endedAt: this.scheduler.now() });
  }

  /** The process failed: the store lets go of it (its environment's list still shows it while it lists it). */
  markFailed(key: ProcessKey): Promise<void> {
    this.entries.delete(keyOf(key));
    return Promise.resolve();
  }

  metaWritten(): Promise<void> {
    return Promise.resolve();
  }

  unready(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.closed = true;
    this.entries.clear();
    this.failures.complete();
    return Promise.resolve();
  }

  private patch(key: ProcessKey, patch: Partial<ProcessMeta>): Promise<void> {
    const entry = this.entries.get(keyOf(key));
    if (entry !== undefined) entry.meta = { ...entry.meta, ...patch };
    return Promise.resolve();
  }

  /** A newer writer for `environmentId`: the histories written at an older epoch take no more appends. */
  private fence(environmentId: string, epoch: number): void {
    if (epoch <= (this.epochs.get(environmentId) ?? 0)) return;
    this.epochs.set(environmentId, epoch);
    for (const entry of this.entries.values()) if (entry.meta.environmentId === environmentId && entry.epoch < epoch) this.refuse(entry);
  }

  private refuse(entry: MemoryEntry): void {
    if (entry.fenced) return;
    entry.fenced = true;
    if (!this.failures.closed) this.failures.next(new StaleEpochError(entry.meta.environmentId, entry.epoch, this.epochs.get(entry.meta.environmentId) ?? entry.epoch));
  }
}
