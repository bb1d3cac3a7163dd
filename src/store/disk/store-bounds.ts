/**
 * The bounds of the disk log store over all its logs: retention (the log of a process that stopped
 * running `retentionMs` ago goes) and the total bound (past it whole logs go, released processes first,
 * then other ended ones, oldest first; then running logs lose middle segments). One pass at a time.
 */
import type { StoreEntry } from './store-entry';
import { evictionOrder, expired, trimOrder } from './store-eviction';

/** What the bounds act on: the store's entries, its clock, and how an entry is removed. */
export interface BoundedStore {
  /** Every entry the store holds now. */
  entries(): Iterable<StoreEntry>;
  /** The store's clock (ms). */
  now(): number;
  /** Removes an entry and its files. Never rejects. */
  removeEntry(entry: StoreEntry): Promise<void>;
}

/** The store's bounds and what they removed, ever (see the module's doc). */
export class StoreBounds {
  /** Whole logs removed, ever: for the total bound, for retention. */
  readonly evicted = { total: 0, retention: 0 };
  private running: Promise<void> = Promise.resolve();
  private queued = false;

  constructor(
    private readonly store: BoundedStore,
    /** The total bound of every log's segments, in bytes. */ readonly totalBytes: number,
    /** How long the log of a process that stopped running is kept. */ private readonly retentionMs: number,
  ) {}

  /** Bytes of every log's segments. */
  get diskBytes(): number {
    let total = 0;
    for (const entry of this.store.entries()) total += entry.bytes;
    return total;
  }

  /** Applies both bounds soon when the total is over its bound (a log grew). */
  check(): void {
    if (this.diskBytes > this.totalBytes) void this.enforce();
  }

  /** Applies retention and the total bound now. One pass at a time (a call during a pass queues one more); never rejects. */
  enforce(): Promise<void> {
    if (this.queued) return this.running;
    this.queued = true;
    this.running = this.running.then(() => {
      this.queued = false;
      return this.pass();
    });
    return this.running;
  }

  /** Resolves once the pass running now (and the one queued) is done. Never rejects. */
  settled(): Promise<void> {
    return this.running;
  }

  private async pass(): Promise<void> {
    for (const entry of expired(this.store.entries(), this.store.now(), this.retentionMs)) {
      this.evicted.retention += 1;
      await this.store.removeEntry(entry);
    }
    let total = this.diskBytes;
    for (const entry of evictionOrder(this.store.entries())) {
      if (total <= this.totalBytes) return;
      total -= entry.bytes;
      this.evicted.total += 1;
      await this.store.removeEntry(entry);
    }
    for (const entry of trimOrder(this.store.entries())) {
      if (total <= this.totalBytes) return;
      const log = entry.log;
      if (log !== undefined) total -= await log.trimTo(Math.max(0, log.diskBytes - (total - this.totalBytes)));
    }
  }
}
