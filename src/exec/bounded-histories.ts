/**
 * The library's default history factory: every process's {@link EventHistory} within per-process bounds,
 * and all of them within one {@link HistoryBudget}. An environment manager makes one per environment;
 * a host's memory log store one per environment generation.
 */
import { DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_EVENTS, memoryHistory } from './event-history';
import { HistoryBudget } from './history-budget';
import type { HistoryFactory } from './output-history';

/** Default total bytes of one factory's budget: 64 MiB. */
export const DEFAULT_TOTAL_HISTORY_BYTES = 64 * 1024 * 1024;

/** Per-process bounds of a {@link boundedHistories} factory. */
export interface HistoryBounds {
  /** Events each history keeps for late subscribers. @default 256 */
  readonly historyEvents?: number;
  /** Output payload bytes each history keeps. @default 1048576 */
  readonly historyBytes?: number;
}

/** A factory of bounded in-memory histories sharing one budget of `totalBytes` (see the module's doc). */
export function boundedHistories(bounds: HistoryBounds = {}, totalBytes = DEFAULT_TOTAL_HISTORY_BYTES): HistoryFactory {
  return memoryHistory({ maxEvents: bounds.historyEvents ?? DEFAULT_HISTORY_EVENTS, maxBytes: bounds.historyBytes ?? DEFAULT_HISTORY_BYTES }, new HistoryBudget(totalBytes));
}
