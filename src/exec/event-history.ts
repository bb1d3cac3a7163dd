import type { Subscriber, TeardownLogic } from 'rxjs';
import { Observable } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { BudgetLease, BudgetMember, HistoryBudget } from './history-budget';
import type { HistoryFactory, HistoryInput, OutputHistory } from './output-history';
import type { FailedEvent, ProcessEvent, TruncatedEvent } from './process-event';
import type { SequencedEvent } from '../wire/process-event';
import { RetainedLog } from './retained-log';
import { RingDeque } from './ring-deque';
import type { ObservableSource } from './source-observable';
import { SourceObservable } from './source-observable';
import { noSubscribers, withoutSubscriber, withSubscriber } from './subscriber-list';

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

/**
 * The library's default {@link HistoryFactory}: each process gets an {@link EventHistory} within
 * `options`, and within `budget` (shared by every history the factory makes) when given.
 */
export const memoryHistory = (options: EventHistoryOptions = {}, budget?: HistoryBudget): HistoryFactory => () => new EventHistory(options, budget);

/**
 * The bounded replay history of one process plus the live fan-out to its subscribers: the in-memory
 * {@link OutputHistory}, and the default one.
 *
 * The owner (ExecProcess) appends events already in seq order. The history keeps the newest ones within
 * `maxEvents` and `maxBytes` (and within the shared {@link HistoryBudget}, if given), evicting the oldest
 * first from a ring. Appends after `closed` or `failed` are ignored; an append made from inside a
 * subscriber's callback is queued and delivered after the current one, so every subscriber sees the
 * same order.
 *
 * Output is retained in a {@link RetainedLog} (no object per retained chunk); what a replay hands out
 * is made again from it for each replay and not kept, so replays never add to what a history holds.
 * Live subscribers get the appended objects themselves.
 *
 * Teardown: the history holds no timers; `release()` drops what it retains and leaves the budget.
 */
export class EventHistory implements OutputHistory, BudgetMember, ObservableSource<ProcessEvent> {
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
  get events$(): Observable<ProcessEvent> {
    this.eventsObservable ??= new SourceObservable<ProcessEvent>(this, 0);
    return this.eventsObservable;
  }

  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly log: RetainedLog;
  /** Absolute index of the log's oldest event (= events ever evicted, released or never retained). */
  private first = 0;
  private dropped = 0;
  private droppedPayload = 0;
  private lastSeq = 0;
  private ended = false;
  private failure: FailedEvent | undefined;
  private released = false;
  private subscribers: readonly Subscriber<ProcessEvent>[] = noSubscribers();
  private emitting = false;
  /** Appends made while emitting, delivered after the current one (made on first need). */
  private deferred: RingDeque<HistoryInput> | undefined;
  private lease: BudgetLease | undefined;
  private eventsObservable: Observable<ProcessEvent> | undefined;

  constructor(options: EventHistoryOptions = {}, budget?: HistoryBudget) {
    this.maxEvents = options.maxEvents ?? DEFAULT_HISTORY_EVENTS;
    this.maxBytes = options.maxBytes ?? DEFAULT_HISTORY_BYTES;
    this.log = new RetainedLog(this.maxBytes);
    this.lease = budget?.register(this);
  }

  /**
   * The events strictly after `afterSeq` (see `OutputHistoryReader.eventsAfter$`): the retained
   * ones, replayed inside `subscribe`, then live. `eventsAfter$(0)` is `events$`; completes, fails and
   * tears down like it.
   */
  eventsAfter$(afterSeq: number): Observable<ProcessEvent> {
    if (afterSeq <= 0) return this.events$;
    return new Observable<ProcessEvent>((subscriber) => {
      if (afterSeq <= this.lastSeq) return this.subscribeTo(subscriber, afterSeq);
      // Nothing retained is wanted: join live, skipping events up to `afterSeq`.
      const wanted = (event: ProcessEvent): boolean => event.type === 'failed' || event.type === 'truncated' || event.seq > afterSeq;
      return new Observable<ProcessEvent>((inner) => this.subscribeTo(inner, this.lastSeq)).pipe(filter(wanted)).subscribe(subscriber);
    });
  }

  /** Events retained for replay. */
  get retainedEvents(): number {
    return this.log.length;
  }

  /** Output payload bytes retained for replay. */
  get retainedBytes(): number {
    return this.log.payloadBytes;
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
      (this.deferred ??= new RingDeque<HistoryInput>(4)).push(event);
      return;
    }
    this.emitting = true;
    try {
      this.process(event);
      if (this.deferred !== undefined && this.deferred.length > 0) this.drainDeferred(this.deferred);
    } finally {
      this.emitting = false;
    }
  }

  private drainDeferred(deferred: RingDeque<HistoryInput>): void {
    for (let next = deferred.shift(); next !== undefined; next = deferred.shift()) this.process(next);
  }

  /**
   * Drops the whole retained history and unregisters from the budget (call it once the process ended and
   * nobody wants its replay). Live subscribers keep receiving; later subscribers get only the
   * `truncated` marker (and completion, once ended). Later events are not retained. Idempotent.
   */
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

  /** @internal Absolute index of the oldest retained event (the budget's view of this history). */
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

  private process(event: HistoryInput): void {
    if (this.ended) return;
    if (event.type === 'failed') {
      this.finish(event);
      return;
    }
    if (event.type === 'truncated') {
      this.skip(event);
      return;
    }
    this.store(event);
    for (const subscriber of this.subscribers) subscriber.next(event);
    if (event.type === 'closed') this.finish(undefined);
  }

  /**
   * Seqs before `marker.nextSeq` will never come: what is held goes (a replay could not be contiguous
   * across the hole), counted with the marker's own counts, and live subscribers get the marker.
   */
  private skip(marker: TruncatedEvent): void {
    if (marker.nextSeq <= this.lastSeq + 1) return;
    while (this.log.length > 0) this.evictOldest();
    this.dropped += marker.droppedEvents;
    this.droppedPayload += marker.droppedBytes;
    this.lastSeq = marker.nextSeq - 1;
    for (const subscriber of this.subscribers) subscriber.next(marker);
  }

  private store(event: SequencedEvent): void {
    const bytes = event.type === 'output' ? event.chunk.byteLength : 0;
    this.lastSeq = event.seq;
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

  /** Nothing older is left and the event alone is over a bound: it is dropped, and still takes its index. */
  private dropOnArrival(bytes: number): void {
    this.first += 1;
    this.dropped += 1;
    this.droppedPayload += bytes;
  }

  private finish(failure: FailedEvent | undefined): void {
    this.ended = true;
    this.failure = failure;
    this.lease?.terminated();
    const subscribers = this.subscribers;
    this.subscribers = noSubscribers();
    for (const subscriber of subscribers) {
      if (failure !== undefined) subscriber.next(failure);
      subscriber.complete();
    }
  }

  private marker(): TruncatedEvent {
    return { type: 'truncated', nextSeq: this.historyStartSeq, droppedEvents: this.dropped, droppedBytes: this.droppedPayload };
  }

  /** The seq of the oldest retained event (the next one to come when nothing is retained). */
  get historyStartSeq(): number {
    return this.log.firstSeq ?? this.lastSeq + 1;
  }

  /**
   * @internal The subscribe function of {@link events$} (`afterSeq` 0) and of `eventsAfter$`: replays the
   * retained events after `afterSeq` (seqs are contiguous, so the first wanted one sits at a known
   * index), then joins the live set, all inside `subscribe`.
   */
  subscribeTo(subscriber: Subscriber<ProcessEvent>, afterSeq: number): TeardownLogic {
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
    if (subscriber.closed) return undefined;
    if (this.ended) {
      if (this.failure !== undefined) subscriber.next(this.failure);
      subscriber.complete();
      return undefined;
    }
    this.subscribers = withSubscriber(this.subscribers, subscriber);
    return () => {
      this.subscribers = withoutSubscriber(this.subscribers, subscriber);
    };
  }
}
