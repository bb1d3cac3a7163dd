/**
 * The host's output logs on disk: this room's one face. A process's output goes into an
 * {@link OutputLog} (append-only CRC'd segments, read by seq), an {@link OutputLogStore} keeps the logs
 * of a data directory (metadata, restart, total bound, retention), and {@link diskHistories} supplies
 * them to the exec layer as its `OutputHistory` port.
 */

/* The log */
export { OutputLog } from './output-log';
export type { OutputLogOptions } from './output-log-options';
export {
  DEFAULT_HIGH_WATER_BYTES,
  DEFAULT_INDEX_INTERVAL_BYTES,
  DEFAULT_LOW_WATER_BYTES,
  DEFAULT_QUOTA_BYTES,
  DEFAULT_READ_WINDOW_BYTES,
  DEFAULT_SEGMENT_BYTES,
  DEFAULT_SYNC_INTERVAL_MS,
} from './output-log-options';
export type { LogEnd } from './log-state';
export type { LogEvent, LogFailedEvent, LogRead, LogTruncatedEvent, Timed, TimedEvent, TruncationReason } from './log-event';

/* The store */
export { OutputLogStore, DEFAULT_RETENTION_MS, DEFAULT_SWEEP_INTERVAL_MS, DEFAULT_TOTAL_BYTES_CAP } from './output-log-store';
export type { OutputLogStoreOptions } from './output-log-store';
export type { ProcessKey, ProcessLaunch, ProcessLogState, ProcessMeta } from './process-meta';

/* The exec layer's port */
export { DiskHistory, diskHistories, DEFAULT_REPLAY_READ_BYTES } from './disk-history';
export type { DiskHistoriesOptions, DiskHistoryHooks, DiskHistoryOptions } from './disk-history';

/* Seams */
export { nodeLogFs } from './log-fs';
export type { LogFile, LogFileMode, LogFs } from './log-fs';
export { BufferPool, sharedBufferPool } from './buffer-pool';
