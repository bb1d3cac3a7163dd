/**
 * The processes the disk log store holds, by directory, and what their logs tell it: each log's failure,
 * syncs and backpressure (the store's streams), its rolls (the bound), its exit and close (the metadata),
 * and the fencing of a writer whose epoch went stale. Also how an entry goes (its files removed).
 */
import type { SchedulerLike } from 'rxjs';
import { Subject } from 'rxjs';
import type { LogWriteOperation } from '../../errors';
import { OutputLogError, StaleEpochError } from '../../errors';
import { errnoOf } from '../errno';
import type { LogPressure, LogStoreFailure } from '../log-store';
import type { ProcessMeta } from '../process-meta';
import type { LogFs } from './log/log-fs';
import type { OutputLog } from './log/output-log';
import type { LogHooks } from './log/output-log-options';
import { watchPressure } from './log-pressure';
import type { StoreEntry } from './store-entry';

/** The entries of one store (see the module's doc). */
export class StoreEntries {
  readonly byDir = new Map<string, StoreEntry>();
  readonly failures = new Subject<LogStoreFailure>();
  readonly syncs = new Subject<number>();
  readonly pressures = new Subject<LogPressure>();
  /** Segments the quota dropped from logs since removed. */
  droppedBefore = 0;
  /** Each environment's newest writer epoch: a log written at an older one is fenced. */
  private readonly epochs = new Map<string, number>();

  constructor(
    private readonly fs: LogFs,
    private readonly scheduler: SchedulerLike,
    /** A log rolled a segment: the store checks its bound. */ private readonly onRoll: () => void,
  ) {}

  /** The epoch a new writer of `environmentId` writes at when none is given: the newest seen. */
  epochOf(environmentId: string): number {
    return this.epochs.get(environmentId) ?? 0;
  }

  /** A newer writer for `environmentId`: the logs written at an older epoch take no more appends, and each is reported. */
  fence(environmentId: string, epoch: number): void {
    if (epoch <= this.epochOf(environmentId)) return;
    this.epochs.set(environmentId, epoch);
    for (const entry of this.byDir.values()) {
      if (entry.meta.environmentId !== environmentId || entry.epoch >= epoch || entry.log?.end !== undefined || !entry.running) continue;
      this.refuse(entry, entry.log);
    }
  }

  /** What the store watches of a log it writes: its failure, its growth (the bound), its exit and close (state, times). */
  hooksOf(entry: StoreEntry): LogHooks {
    return {
      onFailure: (error) => this.failures.next(error),
      onRoll: () => this.onRoll(),
      onSync: (ms) => {
        if (!this.syncs.closed) this.syncs.next(ms);
      },
      onLifecycle: (event) => {
        const now = this.scheduler.now();
        this.update(entry, event.type === 'exited' ? { state: 'exited', exitCode: event.exitCode, exitedAt: now } : { state: 'closed', endedAt: now });
      },
    };
  }

  /** Hands a writing log's backpressure to the store's `pressure$`, and fences it at once when its writer's epoch is already stale. */
  watch(entry: StoreEntry, log: OutputLog): void {
    watchPressure(log, { environmentId: entry.meta.environmentId, processId: entry.meta.processId }, (pressure) => {
      if (!this.pressures.closed) this.pressures.next(pressure);
    });
    if (entry.epoch < this.epochOf(entry.meta.environmentId)) this.refuse(entry, log);
  }

  /** Changes an entry's metadata and queues its write (a failure goes to `failures`). */
  update(entry: StoreEntry, patch: Partial<ProcessMeta>): void {
    entry.update(this.fs, patch, (error) => this.report(entry.meta.processId, 'metadata', error));
  }

  /** Reports a failure of the store's own files. */
  report(processId: string, operation: LogWriteOperation, error: unknown): void {
    if (!this.failures.closed) this.failures.next(new OutputLogError(processId, errnoOf(error), operation));
  }

  /** Takes the entry out and removes its directory. Never rejects (a failure goes to `failures`). */
  async remove(entry: StoreEntry): Promise<void> {
    if (this.byDir.get(entry.dir) === entry) this.byDir.delete(entry.dir);
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

  /** Completes the store's streams (it closed). */
  complete(): void {
    this.failures.complete();
    this.syncs.complete();
    this.pressures.complete();
  }

  /** A stale writer's log takes no more appends; the store says so. */
  private refuse(entry: StoreEntry, log: OutputLog | undefined): void {
    void log?.seal();
    if (!this.failures.closed) this.failures.next(new StaleEpochError(entry.meta.environmentId, entry.epoch, this.epochOf(entry.meta.environmentId)));
  }
}
