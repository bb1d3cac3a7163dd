import type { SchedulerLike } from 'rxjs';
import type { HistoryFactory } from './output-history';

/** Where one process keeps its output, and the limits of its reorder buffer. */
export interface ProcessStreamOptions {
  /**
   * Makes the process's output history, once, when it is started (see `OutputHistory`). When given,
   * `historyEvents` and `historyBytes` are not used: they bound the default.
   * @default in memory (`EventHistory`), within `historyEvents` and `historyBytes`
   */
  readonly outputHistory?: HistoryFactory | undefined;
  /** Events kept for late subscribers by the default in-memory history. @default 256 */
  readonly historyEvents?: number;
  /** Output bytes kept for late subscribers by the default in-memory history. @default 1048576 */
  readonly historyBytes?: number;
  /** Delay before a hole (lost notification) is filled by a read. @default 250 */
  readonly holeFillDelayMs?: number;
  /** Drives the hole-fill timer and `read`'s local wait; tests pass a TestScheduler. @default asyncScheduler */
  readonly scheduler?: SchedulerLike | undefined;
  /** @internal Hears state changes and the release (the environment's process list). */
  readonly listener?: ProcessListener | undefined;
}

/** @internal What hears a process change state or release its history (the environment's process list). */
export interface ProcessListener {
  released(processId: string): void;
  changed(processId: string): void;
}

/** Where an adopted process's counters go on (see `AdoptedProcessRecord`). */
export interface AdoptedCounters {
  /** The last seq the host holds: the next event expected is `lastSeq + 1`. */
  readonly lastSeq: number;
  /** The writeId of the next `process/write`. */
  readonly nextWriteId: number;
}
