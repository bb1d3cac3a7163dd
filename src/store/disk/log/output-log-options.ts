/** The settings of an output log, with their defaults. */
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import type { OutputLogError } from '../../../errors';
import type { ClosedEvent, ExitedEvent } from '../../../wire/process-event';
import type { BufferPool } from './buffer-pool';
import { sharedBufferPool } from './buffer-pool';
import type { LogFs } from './log-fs';
import { nodeLogFs } from './log-fs';

/** Default {@link OutputLogOptions.segmentBytes}: 8 MiB. */
export const DEFAULT_SEGMENT_BYTES = 8 * 1024 * 1024;
/** Default {@link OutputLogOptions.indexIntervalBytes}: 64 KiB. */
export const DEFAULT_INDEX_INTERVAL_BYTES = 64 * 1024;
/** Default {@link OutputLogOptions.quotaBytes}: 1 GiB. */
export const DEFAULT_QUOTA_BYTES = 1024 * 1024 * 1024;
/**
 * Default {@link OutputLogOptions.highWaterBytes}: 2 MiB. Each event waiting for its write is an object
 * the young generation copies at every scavenge; at 8 MiB (about 1000 events) that survival made V8 double
 * its young generation while a fast process streamed, and a host with a reader 100 MiB behind grew by
 * 36-46 MiB instead of about 10. The executor's own socket buffers hold what a pause keeps waiting, and
 * a pause of a few milliseconds costs a CPU-bound host no throughput (docs/performance.md).
 */
export const DEFAULT_HIGH_WATER_BYTES = 2 * 1024 * 1024;
/** Default {@link OutputLogOptions.lowWaterBytes}: 512 KiB. */
export const DEFAULT_LOW_WATER_BYTES = 512 * 1024;
/** Default {@link OutputLogOptions.syncIntervalMs}: 1 s. */
export const DEFAULT_SYNC_INTERVAL_MS = 1000;
/** Default {@link OutputLogOptions.readWindowBytes}: 1 MiB. */
export const DEFAULT_READ_WINDOW_BYTES = 1024 * 1024;

/** How an output log stores and syncs. Every field is optional. */
export interface OutputLogOptions {
  /**
   * A segment rolls (a new file starts) when the next record would take it past this size; a record
   * larger than it gets a segment of its own.
   * @default 8388608 (8 MiB)
   */
  readonly segmentBytes?: number;
  /**
   * Bytes of records between two sparse index entries.
   * @default 65536 (64 KiB)
   */
  readonly indexIntervalBytes?: number;
  /**
   * The process's quota: past it, whole segments go from the middle (the first segment and the newest
   * ones stay), and readers get one `truncated` marker for them. At least the first and the active
   * segment are always kept, so the log may exceed a quota smaller than two segments.
   * @default 1073741824 (1 GiB)
   */
  readonly quotaBytes?: number;
  /**
   * `append` returns false (and `pressure$` emits true) once the bytes taken and not yet written reach
   * this: the caller should pause the producer (the executor's socket).
   * @default 2097152 (2 MiB)
   */
  readonly highWaterBytes?: number;
  /**
   * After the high mark, `pressure$` emits false (and `whenBelowLowMark` resolves) once the unwritten
   * bytes are down to this.
   * @default 524288 (512 KiB)
   */
  readonly lowWaterBytes?: number;
  /**
   * fdatasync runs at most once per this interval while output is written (and at once at a process's
   * exit and close, on `flush` and on `close`).
   * @default 1000
   */
  readonly syncIntervalMs?: number;
  /**
   * Bytes a reader reads from a file at a time.
   * @default 1048576 (1 MiB)
   */
  readonly readWindowBytes?: number;
  /**
   * The clock (receipt times, the sync interval) and the sync timer.
   * @default asyncScheduler
   */
  readonly scheduler?: SchedulerLike;
  /**
   * The file system (a spec injects one that fails or counts).
   * @default nodeLogFs
   */
  readonly fs?: LogFs;
  /**
   * The write buffers, shared by the logs of a host.
   * @default sharedBufferPool
   */
  readonly pool?: BufferPool;
}

/** {@link OutputLogOptions} with every default applied. */
export type ResolvedLogOptions = Required<OutputLogOptions>;

/** Applies the defaults. */
export const resolveLogOptions = (options: OutputLogOptions): ResolvedLogOptions => ({
  segmentBytes: options.segmentBytes ?? DEFAULT_SEGMENT_BYTES,
  indexIntervalBytes: options.indexIntervalBytes ?? DEFAULT_INDEX_INTERVAL_BYTES,
  quotaBytes: options.quotaBytes ?? DEFAULT_QUOTA_BYTES,
  highWaterBytes: options.highWaterBytes ?? DEFAULT_HIGH_WATER_BYTES,
  lowWaterBytes: options.lowWaterBytes ?? DEFAULT_LOW_WATER_BYTES,
  syncIntervalMs: options.syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS,
  readWindowBytes: options.readWindowBytes ?? DEFAULT_READ_WINDOW_BYTES,
  scheduler: options.scheduler ?? asyncScheduler,
  fs: options.fs ?? nodeLogFs,
  pool: options.pool ?? sharedBufferPool,
});

/** What the store hears from a log it made: its failure, its rolls (the log grew). */
export interface LogHooks {
  /** The log failed (once). */
  readonly onFailure?: (error: OutputLogError) => void;
  /** The log started a new segment. */
  readonly onRoll?: () => void;
  /** A segment's fdatasync completed after `ms` (wall clock; the host's metrics). */
  readonly onSync?: (ms: number) => void;
  /** The process exited or closed (the event was just appended). */
  readonly onLifecycle?: (event: ExitedEvent | ClosedEvent) => void;
}
