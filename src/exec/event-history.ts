import type { Subscriber, TeardownLogic } from 'rxjs';
import { Observable } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { BudgetLease, HistoryBudget } from './history-budget';
import type { FailedEvent, ProcessEvent, TruncatedEvent } from './process-event';
import type { SequencedEvent } from '../wire/process-event';
import { eventBytes } from './process-event';
import { RingDeque } from './ring-deque';

/** Bounds of one process's replay history (codex `ExecProcessEventLog`: 256 events, 1 MiB). */
export interface EventHistoryOptions {
  /**
   * Events retained for late subscribers.
   * @default 256
   */
  readonly maxEvents?: number;
  /**
   * Output payload bytes retained for late subscribers.
   * @default 1048576
   */
  readonly maxBytes?: number;
}

/** Default {@link EventHistoryOptions.maxEvents}. */
export const DEFAULT_HISTORY_EVENTS = 256;
/** Default {@link EventHistoryOptions.maxBytes}. */
export const DEFAULT_HISTORY_BYTES = 1_048_576;

/** What the owner appends: published events in seq order, and at most one terminal failure. */
export type HistoryInput = SequencedEvent | FailedEvent;

/**
 * The bounded replay history of one process plus the live fan-out to its subscribers.
 *
 * The owner (ExecProcess) appends events already in seq order. The history keeps the newest ones within
 * `maxEvents` and `maxBytes` (and within the shared {@link HistoryBudget}, if given), evicting the oldest
 * first from a ring. Appends after `closed` or `failed` are ignored; an append made from inside a
 * subscriber's callback is queued and delivered after the current one, so every subscriber sees the
 * same order.
 *
 * Teardown: the history holds no timers; `release()` drops what it retains and leaves the budget.
 */
export class EventHistory {
  /**
   * Every event of the process, per subscriber: first ONE `truncated` marker when anything was dropped
   * (its `nextSeq` is the seq of the first replayed event), then the retained events, then live events,
   * with no gap and no duplicate between replay and live (the replay runs synchronously inside
   * `subscribe`, and the subscriber joins the live set in the same call).
   *
   * Completes after delivering `closed`. A failure is delivered as a `failed` value, then it completes:
   * it never errors. A subscriber arriving after the end gets the replay (and the `failed` value) and
   * completes at once. Unsubscribing only removes that subscriber.
   */
  readonly events$: Observable<ProcessEvent>;

  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly ring = new RingDeque<SequencedEvent>();
  /** Absolute index of the ring's front (= events ever evicted or released). */
  private first = 0;
  private bytes = 0;
  private dropped = 0;
  private droppedPayload = 0;
  private lastSeq = 0;
  private ended = false;
  private failure: FailedEvent | undefined;
  private released = false;
  private subscribers: readonly Subscriber<ProcessEvent>[] = [];
  private emitting = false;
  private readonly deferred = new RingDeque<HistoryInput>();
  private lease: BudgetLease | undefined;

  constructor(options: EventHistoryOptions = {}, budget?: HistoryBudget) {
    this.maxEvents = options.maxEvents ?? DEFAULT_HISTORY_EVENTS;
    this.maxBytes = options.maxBytes ?? DEFAULT_HISTORY_BYTES;
    this.lease = budget?.register({ firstIndex: () => this.first, evictOldest: () => this.evictOldest() });
    this.events$ = new Observable<ProcessEvent>((subscriber) => this.attach(subscriber, 0));
  }

  /**
   * The events strictly after `afterSeq`: the retained ones first, then live, with no gap and no
   * duplicate between them. First ONE `truncated` marker when the history no longer reaches
   * `afterSeq + 1` (its `nextSeq` is the seq of the first event that follows). An `afterSeq` beyond the
   * last event skips live events up to it. `eventsAfter$(0)` is `events$`.
   *
   * Completes, fails and tears down like {@link events$}: a subscriber arriving after the end gets what
   * is retained after `afterSeq` (and the `failed` value) and completes at once.
   */
  eventsAfter$(afterSeq: number): Observable<ProcessEvent> {
    if (afterSeq <= 0) return this.events$;
    return new Observable<ProcessEvent>((subscriber) => {
      if (afterSeq <= this.lastSeq) return this.attach(subscriber, afterSeq);
      // Nothing retained is wanted: join live, skipping events up to `afterSeq`.
      const wanted = (event: ProcessEvent): boolean => event.type === 'failed' || event.type === 'truncated' || event.seq > afterSeq;
      return new Observable<ProcessEvent>((inner) => this.attach(inner, this.lastSeq)).pipe(filter(wanted)).subscribe(subscriber);
    });
  }

  /** Events retained for replay. */
  get retainedEvents(): number {
    return this.ring.length;
  }

  /** Output payload bytes retained for replay. */
  get retainedBytes(): number {
    return this.bytes;
  }

  /** Events dropped from the front of the history so far (by its bounds, the budget or `release()`). */
  get droppedEvents(): number {
    return this.dropped;
  }

  /** Output payload bytes dropped so far. */
  get droppedBytes(): number {
    return this.droppedPayload;
  }

  /** Live subscribers (those that finished their replay and have not unsubscribed). */
  get subscriberCount(): number {
    return this.subscribers.length;
  }

  /** `closed` or `failed` was appended: the history is complete. */
  get terminated(): boolean {
    return this.ended;
  }

  /**
   * Records one published event and delivers it to the live subscribers. `closed` and `failed` end the
   * history and complete every subscriber; later appends are ignored.
   */
  append(event: HistoryInput): void {
    if (this.emitting) {
      this.deferred.push(event);
      return;
    }
    this.emitting = true;
    try {
      this.process(event);
      for (let next = this.deferred.shift(); next !== undefined; next = this.deferred.shift()) this.process(next);
    } finally {
      this.emitting = false;
    }
  }

  /**
   * Drops the whole retained history and unregisters from the budget (call it once the process ended and
   * nobody wants its replay). Live subscribers keep receiving; later subscribers get only the
   * `truncated` marker (and completion, once ended). Later events are not retained. Idempotent.
   */
  release(): void {
    while (this.ring.length > 0) this.evictOldest();
    this.released = true;
    this.lease?.release();
    this.lease = undefined;
  }

  private process(event: HistoryInput): void {
    if (this.ended) return;
    if (event.type === 'failed') {
      this.finish(event);
      return;
    }
    this.store(event);
    for (const subscriber of this.subscribers) subscriber.next(event);
    if (event.type === 'closed') this.finish(undefined);
  }

  private store(event: SequencedEvent): void {
    const bytes = eventBytes(event);
    this.lastSeq = event.seq;
    if (this.released) {
      this.dropped += 1;
      this.droppedPayload += bytes;
      return;
    }
    this.lease?.appended(this.first + this.ring.length, bytes);
    this.ring.push(event);
    this.bytes += bytes;
    while (this.ring.length > this.maxEvents || this.bytes > this.maxBytes) this.evictOldest();
    this.lease?.enforce();
  }

  private evictOldest(): void {
    const event = this.ring.shift();
    if (event === undefined) return;
    const bytes = eventBytes(event);
    this.first += 1;
    this.bytes -= bytes;
    this.dropped += 1;
    this.droppedPayload += bytes;
    this.lease?.evicted(bytes);
  }

  private finish(failure: FailedEvent | undefined): void {
    this.ended = true;
    this.failure = failure;
    this.lease?.terminated();
    const subscribers = this.subscribers;
    this.subscribers = [];
    for (const subscriber of subscribers) {
      if (failure !== undefined) subscriber.next(failure);
      subscriber.complete();
    }
  }

  private marker(): TruncatedEvent {
    return { type: 'truncated', nextSeq: this.firstRetainedSeq(), droppedEvents: this.dropped, droppedBytes: this.droppedPayload };
  }

  /** The seq of the oldest retained event (the next one to come when nothing is retained). */
  firstRetainedSeq(): number {
    return this.ring.peek()?.seq ?? this.lastSeq + 1;
  }

  /**
   * Replays the retained events after `afterSeq` (seqs are contiguous, so the first wanted one sits at a
   * known index), then joins the live set, all inside `subscribe`.
   */
  private attach(subscriber: Subscriber<ProcessEvent>, afterSeq: number): TeardownLogic {
    const firstSeq = this.firstRetainedSeq();
    if (this.dropped > 0 && afterSeq + 1 < firstSeq) subscriber.next(this.marker());
    let cursor = this.first + Math.max(0, afterSeq + 1 - firstSeq);
    // Bounds are re-read each step: a subscriber's callback may append (and evict) during its replay.
    while (cursor < this.first + this.ring.length && !subscriber.closed) {
      if (cursor < this.first) {
        subscriber.next(this.marker()); // eviction overtook this replay: say so rather than skip silently
        cursor = this.first;
        continue;
      }
      const event = this.ring.at(cursor - this.first);
      cursor += 1;
      if (event !== undefined) subscriber.next(event);
    }
    if (subscriber.closed) return undefined;
    if (this.ended) {
      if (this.failure !== undefined) subscriber.next(this.failure);
      subscriber.complete();
      return undefined;
    }
    this.subscribers = [...this.subscribers, subscriber];
    return () => {
      this.subscribers = this.subscribers.filter((s) => s !== subscriber);
    };
  }
}
