/** The options of the Redis state store (`./redis-state-store`). */
import type { SchedulerLike } from 'rxjs';
import type { RedisClient } from './redis-scripts';

/**
 * How `claim` makes the next epoch. `counted`: the current one plus one (1, 2, 3...). `clock`: at least
 * Redis's own clock in ms (`TIME`), so epochs only grow even when Redis restarted empty and forgot the
 * newest one, as long as Redis's clock never steps back by more than the time since the last claim.
 */
export type EpochMode = 'counted' | 'clock';

/** Options of `RedisStateStore.open`. */
export interface RedisStateStoreOptions {
  /** The ioredis client (one Redis or a Cluster). The caller's: it stays open at `close()` unless `ownsConnection`. */
  readonly redis: RedisClient;
  /** `close()` quits `redis` too. @default false */
  readonly ownsConnection?: boolean;
  /** The start of every key (no `{` or `}`): stores with different prefixes share nothing. @default 'exec-rx' */
  readonly prefix?: string;
  /** The clock of `updatedAt` and `recordedAt`. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** How many keyed starts are kept, across the store. @default RECORDED_STARTS (4096) */
  readonly maxStarts?: number;
  /** How `claim` makes epochs ({@link EpochMode}). @default 'counted' */
  readonly epochs?: EpochMode;
}
