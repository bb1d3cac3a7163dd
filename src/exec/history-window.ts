/**
 * The retained window of one in-memory history (`EventHistory`'s replay side): the newest events within
 * the history's bounds and its share of a {@link HistoryBudget}, the counts of what was dropped, and the
 * replay of what is held to one subscriber.
 */
import type { Subscriber } from 'rxjs';
import type { BudgetLease, BudgetMember, HistoryBudget } from './history-budget';
import type { ProcessEvent, TruncatedEvent } from './process-event';
import type { SequencedEvent } from '../wire/process-event';
import { RetainedLog } from './retained-log';

/**
 * What one history retains for replay: the newest events within `maxEvents` and `maxBytes` (and within
 * the shared {@link HistoryBudget}, if given), evicting the oldest first from a ring.
 *
 * Output is retained in a {@link RetainedLog} (no object per retained chunk); what a replay hands out
 * is made again from it for each replay and not kept, so replays never add to what a history holds.
 *
 * Teardown: the window holds no timers; `release()` drops what it retains and leaves the budget.
 */
export class HistoryWindow implements BudgetMember {
  private readonly log: RetainedLog;
  /** Absolute index of the log's oldest event (= events ever evicted, released or never retained). */
  private first = 0;
  private dropped = 0;
  private droppedPayload = 0;
  private last = 0;
  private released = false;
  private lease: BudgetLease | undefined;

  /** Retains within `maxEvents` and `maxBytes`, and registers with `budget` when given. */
  constructor(
    private readonly maxEvents: number,
    private readonly maxBytes: number,
    budget?: HistoryBudget,
  ) {
    this.log = new RetainedLog(maxBytes);
    this.lease = budget?.register(this);
  }

  /** Events retained for replay. */
  get retainedEvents(): number {
    return this.log.length;
  }

  /** Output payload bytes retained for replay. */
  get retainedBytes(): number {
    return this.log.payloadBytes;
  }

  /** Events dropped from the front so far (by the bounds, the budget, a skip or `release()`). */
  get droppedEvents(): number {
    return this.dropped;
  }

  /** Output payload bytes dropped so far. */
  get droppedBytes(): number {
    return this.droppedPayload;
  }

  /** The seq of the last event stored or skipped past (0 before any). */
  get lastSeq(): number {
    return this.last;
  }

  /** The seq of the oldest retained event (the next one to come when nothing is retained). */
  get historyStartSeq(): number {
    return this.log.firstSeq ?? this.last + 1;
  }

  /** Retains one event, evicting the oldest first to stay within the bounds; after `release()` it only counts it as dropped. */
  store(event: SequencedEvent): void {
    const bytes = event.type === 'output' ? event.chunk.byteLength : 0;
    this.last = event.seq;
    if (this.released) {
      this.dropped += 1;
      this.droppedPayload += bytes;
      return;
    }
    // Room first, within the own bounds: the log only ever holds what it may keep.
    const log = this.log;
    if (log.length >= this.maxEvents && log.length > 0) {
      // The steady state of a stream at its event bound: drop the oldest and take this one in one step.
      const freed = log.rotate(event, this.maxBytes);
      if (freed >= 0) {
        const index = this.first + log.length;
        this.first += 1;
        this.dropped += 1;
        this.droppedPayload += freed;
        if (this.lease !== undefined) this.lease.rotated(freed, index, bytes);
        return;
      }
    }
    while (log.length > 0 && (log.length >= this.maxEvents || log.payloadBytes + bytes > this.maxBytes)) this.evictOldest();
    if (this.maxEvents < 1 || bytes > this.maxBytes) return this.dropOnArrival(bytes);
    const index = this.first + log.length;
    log.push(event);
    if (this.lease !== undefined) this.lease.appended(index, bytes);
  }

  /**
   * Seqs before `marker.nextSeq` will never come: what is held goes (a replay could not be contiguous
   * across the hole), counted with the marker's own counts. False (nothing changed) when the marker
   * skips nothing that is still to come.
   */
  skip(marker: TruncatedEvent): boolean {
    if (marker.nextSeq <= this.last + 1) return false;
    while (this.log.length > 0) this.evictOldest();
    this.dropped += marker.droppedEvents;
    this.droppedPayload += marker.droppedBytes;
    this.last = marker.nextSeq - 1;
    return true;
  }

  /** The process ended: small retained bytes are compacted (`RetainedLog.compact`); the budget evicts from this window first from now on. */
  terminated(): void {
    this.log.compact();
    this.lease?.terminated();
  }

  /** Drops everything retained and unregisters from the budget; later events are counted as dropped, not retained. Idempotent. */
  release(): void {
    // At once: evicting one by one would shrink (reallocate) the byte ring on the way.
    const events = this.log.length;
    this.first += events;
    this.dropped += events;
    this.droppedPayload += this.log.payloadBytes;
    this.log.clear();
    this.released = true;
    this.lease?.release(); // takes what is left of this history off the budget
    this.lease = undefined;
  }

  /** @internal Absolute index of the oldest retained event (the budget's view of this window). */
  firstIndex(): number {
    return this.first;
  }

  /** @internal Drops the oldest retained event (its own bounds, the budget, or `release()`). */
  evictOldest(): void {
    if (this.log.length === 0) return;
    const bytes = this.log.shift();
    this.first += 1;
    this.dropped += 1;
    this.droppedPayload += bytes;
    if (this.lease !== undefined) this.lease.evicted(bytes);
  }

  /**
   * Replays to `subscriber` the retained events after `afterSeq`, first ONE `truncated` marker when
   * anything before them was dropped (seqs are contiguous, so the first wanted one sits at a known
   * index). Stops early when the subscriber closes.
   */
  replay(subscriber: Subscriber<ProcessEvent>, afterSeq: number): void {
    const firstSeq = this.historyStartSeq;
    if (this.dropped > 0 && afterSeq + 1 < firstSeq) subscriber.next(this.marker());
    let cursor = this.first + Math.max(0, afterSeq + 1 - firstSeq);
    // Bounds are re-read each step: a subscriber's callback may append (and evict) during its replay.
    while (cursor < this.first + this.log.length && !subscriber.closed) {
      if (cursor < this.first) {
        subscriber.next(this.marker()); // eviction overtook this replay: say so rather than skip silently
        cursor = this.first;
        continue;
      }
      const event = this.log.at(cursor - this.first);
      cursor += 1;
      if (event !== undefined) subscriber.next(event);
    }
  }

  /** Nothing older is left and the event alone is over a bound: it is dropped, and still takes its index. */
  private dropOnArrival(bytes: number): void {
    this.first += 1;
    this.dropped += 1;
    this.droppedPayload += bytes;
  }

  private marker(): TruncatedEvent {
    return { type: 'truncated', nextSeq: this.historyStartSeq, droppedEvents: this.dropped, droppedBytes: this.droppedPayload };
  }
}
