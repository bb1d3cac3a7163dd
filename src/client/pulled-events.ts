/**
 * `HostClient.eventStream` and `HostClient.events`: a process's events pulled by their consumer, with
 * backpressure. At most `highWaterMark` events wait read ahead of the consumer; while that many wait,
 * the client reads no more of the HTTP body, so TCP holds the host back instead of this side's memory.
 * Resumption by seq after a dropped connection is the one of `events$` (an event read ahead counts as
 * delivered: a cut never loses or repeats one, however far behind the consumer is).
 */
import type { HostConnection } from './host-connection';
import type { HostProcessEvent } from './host-types';
import type { ProcessEventsOptions } from './process-event-stream';
import { followProcess } from './process-event-stream';
import { abortReason } from './retry';

/** Options of `HostClient.eventStream` and `HostClient.events`. */
export interface PulledEventsOptions extends ProcessEventsOptions {
  /**
   * How many events may wait read ahead of the consumer. Once that many wait, the client reads no more of
   * the HTTP body until the consumer takes one. One read of the body may bring several events (what one
   * network chunk held), so the queue can pass the mark by those. `0` reads only while the consumer waits
   * for an event. A whole number ≥ 0, else a RangeError. @default 16
   */
  readonly highWaterMark?: number;
  /** Aborting ends the stream: a read waiting or to come rejects with `signal.reason`, and the request is aborted. */
  readonly signal?: AbortSignal;
}

/** Default {@link PulledEventsOptions.highWaterMark}. */
const DEFAULT_HIGH_WATER_MARK = 16;

/** How the events ended: the stream closes, or errors, once the events before it were taken. */
type End = { readonly kind: 'close' } | { readonly kind: 'error'; readonly error: unknown };

/**
 * The events read ahead, and the end after them, served one per `pull` of a ReadableStream that keeps
 * none itself (its high-water mark is 0: it pulls only while its consumer waits for a read).
 */
class EventQueue {
  private readonly items: HostProcessEvent[] = [];
  private end: End | undefined;
  /** A pull waiting for an event or the end. */
  private serve: (() => void) | undefined;
  /** The reader of the body waiting for room. */
  private waiting: (() => void) | undefined;

  constructor(
    private readonly highWaterMark: number,
    /** Where the consumer's reads are answered: an event, or the end. */
    private readonly hand: (item: HostProcessEvent | End) => void,
  ) {}

  push(event: HostProcessEvent): void {
    this.items.push(event);
    this.serve?.();
  }

  finish(end: End): void {
    this.end ??= end;
    this.serve?.();
  }

  /** The consumer waits for a read: hands it the next event, or the end, as soon as there is one. */
  pull(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.serve = (): void => {
        const event = this.items.shift();
        if (event === undefined && this.end === undefined) return;
        this.serve = undefined;
        resolve();
        this.hand(event ?? this.end ?? { kind: 'close' });
      };
      this.serve();
      this.wake();
    });
  }

  /** `undefined` while there is room (under the mark, or the consumer waits), else a promise of room. */
  room(): Promise<void> | undefined {
    if (this.items.length < this.highWaterMark || this.serve !== undefined || this.end !== undefined) return undefined;
    return new Promise<void>((resolve) => (this.waiting = resolve));
  }

  /** Lets a reader of the body waiting for room go on (there is room now, or the stream ended). */
  wake(): void {
    if (this.items.length >= this.highWaterMark && this.serve === undefined && this.end === undefined) return;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}

/** The high-water mark of `options`, checked. */
function highWaterMarkOf(options: PulledEventsOptions): number {
  const mark = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
  if (!Number.isSafeInteger(mark) || mark < 0) throw new RangeError(`highWaterMark must be a whole number >= 0 (got ${mark})`);
  return mark;
}

/**
 * The events of process `processId` of `environmentId` as a ReadableStream with backpressure: the same
 * events as `events$` (each once, in seq order, `truncated` markers), then the stream closes after
 * `closed` (or, with `follow: false`, once what the host holds was delivered) or errors as `events$`
 * does, in both cases after every event before it was read; it errors with `signal.reason` at once when
 * `options.signal` aborts. Cold: the request starts when the stream is made; cancelling it aborts the
 * request and every wait. `onEnd` is told once the stream ended, however (it may be told twice).
 */
export function pulledEvents(
  connection: HostConnection,
  environmentId: string,
  processId: string,
  options: PulledEventsOptions = {},
  onEnd: () => void = () => undefined,
): ReadableStream<HostProcessEvent> {
  const abort = new AbortController();
  const { signal } = options;
  let controller: ReadableStreamDefaultController<HostProcessEvent> | undefined;
  const quit = (): void => {
    onEnd();
    signal?.removeEventListener('abort', onAbort);
    abort.abort();
    queue.wake();
  };
  const onAbort = (): void => {
    quit();
    controller?.error(abortReason(signal));
  };
  const queue = new EventQueue(highWaterMarkOf(options), (item) => {
    if ('type' in item) return controller?.enqueue(item);
    onEnd();
    signal?.removeEventListener('abort', onAbort);
    if (item.kind === 'error') controller?.error(item.error);
    else controller?.close();
  });
  const start = (): void => {
    if (signal?.aborted === true) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const emit = (event: HostProcessEvent): void => {
      if (!abort.signal.aborted) queue.push(event);
    };
    followProcess(connection, environmentId, processId, options, emit, abort.signal, () => queue.room()).then(
      () => {
        if (!abort.signal.aborted) queue.finish({ kind: 'close' });
      },
      (error: unknown) => {
        if (!abort.signal.aborted) queue.finish({ kind: 'error', error });
      },
    );
  };
  return new ReadableStream<HostProcessEvent>(
    {
      start: (c) => {
        controller = c;
        start();
      },
      pull: () => queue.pull(),
      cancel: quit,
    },
    { highWaterMark: 0 },
  );
}

/**
 * The events of `stream` as an async iterator (`for await`): each `next()` reads one; `return()` (a
 * `break` out of the loop) cancels the stream; `throw()` cancels it and rethrows. Works where a
 * ReadableStream is not async iterable itself (some browsers).
 */
export function iterate<T>(stream: ReadableStream<T>): AsyncIterableIterator<T> {
  const reader = stream.getReader();
  const finish = async (): Promise<IteratorReturnResult<undefined>> => {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
    return { done: true, value: undefined };
  };
  const iterator: AsyncIterableIterator<T> = {
    next: async () => {
      const result = await reader.read();
      return result.done ? { done: true, value: undefined } : { done: false, value: result.value };
    },
    return: finish,
    throw: async (error?: unknown) => {
      await finish();
      throw error;
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}
