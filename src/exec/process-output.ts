/**
 * `ProcessOutput`: the reading side of an `ExecProcess`, what its readers get of its output: its events
 * from its history (a replay, then live, or resumed after a seq), the byte, text and line views of them,
 * a bounded iterator, and a Readable that holds the connection paused while its consumer is behind.
 */
import type { Observable } from 'rxjs';
import type { Readable } from 'node:stream';
import type { ConnectionFlow, FlowHold } from '../rpc/connection-flow';
import { toBoundedAsyncIterable } from './bounded-iterator';
import type { OutputHistory, OutputHistoryReader } from './output-history';
import type { ProcessReadableOptions } from './output-readable';
import { DEFAULT_READABLE_HIGH_WATER_MARK, pullReadable } from './output-readable';
import type { ProcessViewOptions, StreamSelection } from './output-views';
import { bytesOf, linesOf, textOf } from './output-views';
import type { ProcessEvent } from './process-event';
import type { RetainedHistory } from './process-summaries';

/**
 * The output of a process, read through its history: what `ExecProcess` offers its readers. Every view
 * is its own subscription to the history; unsubscribing from any of them never stops the process.
 */
export abstract class ProcessOutput implements OutputHistoryReader {
  /** @internal Made by `options.outputHistory` (whoever starts the process supplies it), in memory by default. */
  protected readonly history: OutputHistory;

  /** @internal `history`: where the process's events are kept; `connection`: the session its output comes over. */
  constructor(
    history: OutputHistory,
    private readonly connection: { readonly flow: ConnectionFlow },
  ) {
    this.history = history;
  }

  /**
   * Every event of the process: a replay of the retained history (after a `truncated` marker when some
   * was dropped), then live events. Completes after `closed` or after a `failed` event; never errors.
   * Each subscriber gets its own replay; unsubscribing does not affect the process.
   */
  get events$(): Observable<ProcessEvent> {
    return this.history.eventsAfter$(0);
  }

  /**
   * The events strictly after `afterSeq`, for a subscriber resuming where it left off: the retained
   * ones, then live. First ONE `truncated` marker when the history no longer reaches `afterSeq + 1` (its
   * `nextSeq` names the first event that follows; nothing after it is missing). Completes after `closed`
   * or a `failed` event; never errors; unsubscribing affects nothing else.
   */
  eventsAfter$(afterSeq: number): Observable<ProcessEvent> {
    return this.history.eventsAfter$(afterSeq);
  }

  /**
   * The oldest seq a replay can still give: events before it were dropped from the bounded history
   * (`read` may still find their output in the executor's own window). When nothing is retained, the
   * seq of the next event to come.
   */
  get historyStartSeq(): number {
    return this.history.historyStartSeq;
  }

  /** Retained history and subscribers (bookkeeping). */
  get retained(): RetainedHistory {
    return { events: this.history.retainedEvents, bytes: this.history.retainedBytes, subscribers: this.history.subscriberCount };
  }

  /**
   * Output bytes of the chosen streams, in seq order. Completes at `closed`; errors with the failure at
   * `failed`, and with ReplayTruncatedError at a `truncated` marker unless `allowTruncated`. Reads from
   * `afterSeq` when given. Unsubscribing affects only this view.
   */
  bytes$(stream?: StreamSelection, options: ProcessViewOptions = {}): Observable<Uint8Array> {
    return this.source(options).pipe(bytesOf(stream, options));
  }

  /** UTF-8 text of the chosen streams, decoded correctly across chunk boundaries; completes and errors as {@link bytes$}. */
  text$(stream?: StreamSelection, options: ProcessViewOptions = {}): Observable<string> {
    return this.source(options).pipe(textOf(stream, options));
  }

  /** Lines of text (without their line ending); a last unterminated line is emitted at close; completes and errors as {@link bytes$}. */
  lines$(stream?: StreamSelection, options: ProcessViewOptions = {}): Observable<string> {
    return this.source(options).pipe(linesOf(stream, options));
  }

  /** For `for await`: a bounded buffer; a consumer that falls behind gets ConsumerOverflowError naming what it missed. */
  iterate(capacity = 1024): AsyncIterableIterator<ProcessEvent> {
    return toBoundedAsyncIterable(this.events$, capacity);
  }

  /** `for await (const event of process)`: {@link iterate} with its default capacity (1024 events). */
  [Symbol.asyncIterator](): AsyncIterableIterator<ProcessEvent> {
    return this.iterate();
  }

  /**
   * The output bytes of the chosen streams as a Node `Readable` that pulls (also `for await`): while its
   * consumer is `highWaterMark` bytes behind it holds the connection paused, and reads again once the
   * consumer took it below. Memory stays bounded and nothing is lost, but pausing is not free: the
   * executor sends the output of **every** process on this connection through one channel, so all of
   * them wait (their writes block) while this consumer is behind, and so do call replies. Subscribes at
   * once; ends at `closed`; destroyed with the failure at `failed`, and with ReplayTruncatedError at a
   * `truncated` marker unless `allowTruncated`. Destroy it when you stop reading early.
   */
  toReadable(stream?: StreamSelection, options: ProcessReadableOptions = {}): Readable {
    return pullReadable(this.bytes$(stream, options), () => this.holdConnection(), options.highWaterMark ?? DEFAULT_READABLE_HIGH_WATER_MARK);
  }

  /**
   * Holds the connection this process's output comes over paused until the hold is released (for a
   * consumer of its own that fell behind, e.g. a full `stdout.write()` until 'drain'). Every process on
   * that connection waits meanwhile; holds are counted, and the connection reads again when all are released.
   */
  holdConnection(): FlowHold {
    return this.connection.flow.hold();
  }

  private source(options: ProcessViewOptions): Observable<ProcessEvent> {
    return options.afterSeq === undefined ? this.events$ : this.eventsAfter$(options.afterSeq);
  }
}
