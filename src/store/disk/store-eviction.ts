/**
 * Which whole logs the store removes, and in what order: pure decisions over what it knows of each
 * process, so that they are easy to read and to test. The store acts on them.
 */

/** What the eviction rules look at in one process's log. */
export interface EvictionView {
  /** The process still runs (its log is never removed whole, only trimmed). */
  readonly running: boolean;
  /** Its owner released its history. */
  readonly released: boolean;
  /** When it stopped running (ms since the epoch). */
  readonly endedAt: number;
  /** Bytes of its log on disk. */
  readonly bytes: number;
}

/**
 * The logs past their retention: processes that stopped running at least `retentionMs` ago, oldest
 * first. A running process is never among them.
 */
export function expired<V extends EvictionView>(views: Iterable<V>, now: number, retentionMs: number): V[] {
  return [...views].filter((view) => !view.running && view.endedAt + retentionMs <= now).sort((a, b) => a.endedAt - b.endedAt);
}

/**
 * The order in which whole logs go when the store is over its total bound: released processes first,
 * then the other processes that stopped running, oldest first within each. Running processes are not
 * in it (the store trims their middle segments instead, largest log first).
 */
export function evictionOrder<V extends EvictionView>(views: Iterable<V>): V[] {
  return [...views]
    .filter((view) => !view.running)
    .sort((a, b) => (a.released === b.released ? a.endedAt - b.endedAt : a.released ? -1 : 1));
}

/** The running processes' logs, largest first: where the store trims when removing whole logs was not enough. */
export function trimOrder<V extends EvictionView>(views: Iterable<V>): V[] {
  return [...views].filter((view) => view.running).sort((a, b) => b.bytes - a.bytes);
}
