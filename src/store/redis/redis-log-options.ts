/** The options of the Redis log store (`RedisLogStore.open`) and their defaults. */
import type Redis from 'ioredis';
import type { SchedulerLike } from 'rxjs';

/** Default {@link RedisLogStoreOptions.quotaBytes}: 64 MiB per process. */
export const DEFAULT_REDIS_QUOTA_BYTES = 64 * 1024 * 1024;
/** Default {@link RedisLogStoreOptions.bufferBytes}: 64 MiB per process. */
export const DEFAULT_REDIS_BUFFER_BYTES = 64 * 1024 * 1024;
/** Default {@link RedisLogStoreOptions.pressureBytes}: 4 MiB. */
export const DEFAULT_REDIS_PRESSURE_BYTES = 4 * 1024 * 1024;
/** Default {@link RedisLogStoreOptions.retentionMs}: 7 days. */
export const DEFAULT_REDIS_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** Default {@link RedisLogStoreOptions.releasedRetentionMs}: 1 hour. */
export const DEFAULT_REDIS_RELEASED_RETENTION_MS = 60 * 60 * 1000;
/** How many stall periods (`stallMs`) a take-back's reads (`adopt`) may take before it rejects (ETIMEDOUT). */
export const ADOPT_READ_STALLS = 2;

/** Default {@link RedisLogStoreOptions.stallMs}: 2 s. */
export const DEFAULT_REDIS_STALL_MS = 2000;
/** Default {@link RedisLogStoreOptions.followBlockMs}: 1 s. */
export const DEFAULT_REDIS_FOLLOW_BLOCK_MS = 1000;
/** Default {@link RedisLogStoreOptions.closeTimeoutMs}: 5 s. */
export const DEFAULT_REDIS_CLOSE_TIMEOUT_MS = 5000;
/** Default {@link RedisLogStoreOptions.flushTimeoutMs}: 5 s. */
export const DEFAULT_REDIS_FLUSH_TIMEOUT_MS = 5000;

/** Options of `RedisLogStore.open`. */
export interface RedisLogStoreOptions {
  /** The connection of the store's commands and scripts (the caller's: it quits it after `close()`). */
  readonly redis: Redis;
  /** Makes a dedicated connection for one environment's blocking follow loop (the store disconnects it on `close()`). @default `redis.duplicate()` */
  readonly subscriber?: () => Redis;
  /** What every key starts with (several stores, or tests, share one Redis apart). @default 'exec-rx' */
  readonly prefix?: string;
  /** The clock of receipt times and the store's timers. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** Output bytes each process's stream keeps: past it the oldest entries go (the newest always stays). @default 67108864 (64 MiB) */
  readonly quotaBytes?: number;
  /** Output bytes each process may hold unwritten while Redis is unreachable: past it its log fails (LOG_WRITE_FAILED). @default 67108864 (64 MiB) */
  readonly bufferBytes?: number;
  /** A process's unwritten backlog at which it is behind (`pressure$`: its executor is paused); it is no longer at half of it. @default 4194304 (4 MiB) */
  readonly pressureBytes?: number;
  /** How long a process's keys stay once it ended (closed, failed, lost, unknown). @default 604800000 (7 days) */
  readonly retentionMs?: number;
  /** How long a process's keys stay once released (at most `retentionMs`). @default 3600000 (1 hour) */
  readonly releasedRetentionMs?: number;
  /** A script call unanswered this long means Redis is unreachable (a paused server keeps its sockets open). @default 2000 */
  readonly stallMs?: number;
  /** How long one blocking `XREAD` of a follow loop waits (and so how late an end no entry says is seen). @default 1000 */
  readonly followBlockMs?: number;
  /** How long `close()` waits for the logs to be written before it fails those that are not. @default 5000 */
  readonly closeTimeoutMs?: number;
  /**
   * How long `flush()` (a host's graceful stop) waits for the logs to be written before it fails those
   * that are not (LOG_WRITE_FAILED `ETIMEDOUT`: a `writeFailed` marker for their readers). @default 5000
   */
  readonly flushTimeoutMs?: number;
}
