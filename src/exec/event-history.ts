/**
 * The library's default output history: {@link EventHistory} (a process's bounded replay history in
 * memory plus the live fan-out to its subscribers), its bounds and their defaults, and the factory that
 * makes one per process. What it retains, and how, is its `HistoryWindow` (history-window.ts).
 */
import type { Subscriber, TeardownLogic } from 'rxjs';
import { Observable } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { HistoryBudget } from './history-budget';
import type { HistoryFactory, HistoryInput, OutputHistory } from './output-history';
import type { FailedEvent, ProcessEvent, TruncatedEvent } from './process-event';
import { HistoryWindow } from './history-window';
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
 * `maxEvents` and `maxBytes` (and within the shared {@link HistoryBudget}, if given) in its window,
 * evicting the oldest first. Appends after `closed` or `failed` are ignored; an append made from inside a
 * subscriber's callback is queued and delivered after the current one, so every subscriber sees the
 * same order.
 *
 * What a replay hands out is made again for each replay and not kept, so replays never add to what a
 * history holds. Live subscribers get the appended objects themselves.
 *
 * Teardown: the history holds no timers; `release()` drops what it retains and leaves the budget.
 */
export class EventHistory implements OutputHistory, ObservableSource<ProcessEvent> {
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

  /** What is retained for replay, within the bounds and the budget. */
  private readonly window: HistoryWindow;
  private ended = false;
  private failure: FailedEvent | undefined;
  private subscribers: readonly Subscriber<ProcessEvent>[] = noSubscribers();
  private emitting = false;
  /** Appends made while emitting, delivered after the current one (made on first need). */
  private deferred: RingDeque<HistoryInput> | undefined;
  private eventsObservable: Observable<ProcessEvent> | undefined;

  constructor(options: EventHistoryOptions = {}, budget?: HistoryBudget) {
    this.window = new HistoryWindow(options.maxEvents ?? DEFAULT_HISTORY_EVENTS, options.maxBytes ?? DEFAULT_HISTORY_BYTES, budget);
  }

  /**
   * The events strictly after `afterSeq` (see `OutputHistoryReader.eventsAfter$`): the retained
   * ones, replayed inside `subscribe`, then live. `eventsAfter$(0)` is `events$`; completes, fails and
   * tears down like it.
   */
  eventsAfter$(afterSeq: number): Observable<ProcessEvent> {
    if (afterSeq <= 0) return this.events$;
    return new Observable<ProcessEvent>((subscriber) => {
      if (afterSeq <= this.window.lastSeq) return this.subscribeTo(subscriber, afterSeq);
      // Nothing retained is wanted: join live, skipping events up to `afterSeq`.
      const wanted = (event: ProcessEvent): boolean => event.type === 'failed' || event.type === 'truncated' || event.seq > afterSeq;
      return new Observable<ProcessEvent>((inner) => this.subscribeTo(inner, this.window.lastSeq)).pipe(filter(wanted)).subscribe(subscriber);
    });
  }

  /** Events retained for replay. */
  get retainedEvents(): number {
    return this.window.retainedEvents;
  }

  /** Output payload bytes retained for replay. */
  get retainedBytes(): number {
    return this.window.retainedBytes;
  }

  /** Events dropped from the front of the history so far (by its bounds, the budget or `release()`). */
  get droppedEvents(): number {
    return this.window.droppedEvents;
  }

  /** Output payload bytes dropped so far. */
  get droppedBytes(): number {
    return this.window.droppedBytes;
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
    this.window.release();
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
    this.window.store(event);
    for (const subscriber of this.subscribers) subscriber.next(event);
    if (event.type === 'closed') this.finish(undefined);
  }

  /** Seqs before `marker.nextSeq` will never come: the window lets go of what it holds, and live subscribers get the marker. */
  private skip(marker: TruncatedEvent): void {
    if (!this.window.skip(marker)) return;
    for (const subscriber of this.subscribers) subscriber.next(marker);
  }

  private finish(failure: FailedEvent | undefined): void {
    this.ended = true;
    this.failure = failure;
    this.window.terminated();
    const subscribers = this.subscribers;
    this.subscribers = noSubscribers();
    for (const subscriber of subscribers) {
      if (failure !== undefined) subscriber.next(failure);
      subscriber.complete();
    }
  }

  /** The seq of the oldest retained event (the next one to come when nothing is retained). */
  get historyStartSeq(): number {
    return this.window.historyStartSeq;
  }

  /**
   * @internal The subscribe function of {@link events$} (`afterSeq` 0) and of `eventsAfter$`: replays the
   * retained events after `afterSeq`, then joins the live set, all inside `subscribe`.
   */
  subscribeTo(subscriber: Subscriber<ProcessEvent>, afterSeq: number): TeardownLogic {
    this.window.replay(subscriber, afterSeq);
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
