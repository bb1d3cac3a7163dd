/** The settings of the disk log store, with their defaults (each log's own are `./log/output-log-options`). */
import type { OutputLogOptions } from './log/output-log-options';

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
