/**
 * The exec layer's `OutputHistory` port backed by a log read at the reader's pace: what the disk log store
 * (`store/disk`, over an `OutputLog`) and the Redis log store (`store/redis`, over a `RedisLog`) make for
 * each process, so that a process's output outlives the memory bound (and the host). One class for both:
 * append to the log and to the live subscribers at once, replay asynchronously from the log at the
 * reader's pace, then join the live ones in the turn it is caught up.
 */
import { Observable, type Subscriber } from 'rxjs';
import { ExecClientError, type OutputLogError, OutputLogReadError, ResumeFailedError, TransportClosedError } from '../errors';
import type { HistoryInput, OutputHistory } from '../exec/output-history';
import type { FailedEvent, ProcessEvent } from '../exec/process-event';
import type { SequencedEvent } from '../wire/process-event';
import type { LogEvent, LogRead, TimedEvent } from './log-events';
import { truncatedRange } from './log-events';

/** What a {@link PacedHistory} needs of its log (the disk's `OutputLog` and Redis's `RedisLog` are such logs). */
export interface PacedHistoryLog {
  /** The process the log belongs to. */
  readonly processId: string;
  /** The first seq the log holds. */
  readonly firstSeq: number;
  /** The last seq the log took. */
  readonly lastSeq: number;
  /** Output bytes the log holds. */
  readonly storedBytes: number;
  /** Events the log holds. */
  readonly storedEvents: number;
  /** The log's write failure, once it failed. */
  readonly failure: OutputLogError | undefined;
  /** Queues an event (never throws, never blocks). */
  append(event: SequencedEvent): unknown;
  /** Records that the executor will never send the seqs before `nextSeq` (a hole of `droppedBytes`). */
  appendGap(nextSeq: number, droppedBytes: number): void;
  /** The events after `afterSeq`, up to about `maxBytes` (see `PacedLogReader.read`). */
  read(afterSeq: number, maxBytes: number): Promise<LogRead>;
  /** Resolves once the log holds a seq after `afterSeq`, or takes no more appends. */
  waitFor(afterSeq: number): Promise<void>;
  /** The log takes no more appends (what it took is still written). */
  seal(): Promise<void>;
}

/** Default {@link PacedHistoryOptions.replayReadBytes}: 1 MiB. */
export const DEFAULT_REPLAY_READ_BYTES = 1024 * 1024;

/** How a {@link PacedHistory} replays. */
export interface PacedHistoryOptions {
  /**
   * Output bytes one read of a replay takes from the log.
   * @default 1048576 (1 MiB)
   */
  readonly replayReadBytes?: number;
}

/**
 * Why a process whose stream failed is `lost` rather than `failed`, or undefined: its executor no longer
 * had its session (the executor restarted, or the session outlived its 80 s retention), so the process was
 * killed with it, whatever this host did; or its start was never answered (the connection dropped), so
 * whether it began is not known and it was terminated. Its log says so to every reader.
 */
export function lostReasonOf(failure: FailedEvent): string | undefined {
  for (let error: unknown = failure.error; error instanceof Error; error = error.cause) {
    if (error instanceof ResumeFailedError && error.reason === 'unknownSession') {
      return 'the executor no longer had its session (it restarted, or the session outlived its 80 s retention): the process was killed with it';
    }
    // Only a start whose answer the connection lost fails a process with this cause (`ExecBackend`'s clean-up).
    if (error instanceof TransportClosedError) return failure.error.message;
  }
  return undefined;
}

/** What the owner of a {@link PacedHistory} hears (the store's bookkeeping). */
export interface PacedHistoryHooks {
  /** The process failed (a `failed` event was appended): `lost` says why it is lost rather than failed (see {@link lostReasonOf}). */
  readonly onFailed?: (lost: string | undefined) => void;
  /** The history was released. */
  readonly onRelease?: () => void;
  /** The history was discarded (its process never ran, see `OutputHistory.discard`); absent: `onRelease` is called. */
  readonly onDiscard?: () => void;
  /** Resolves once the process's metadata is on the disk (`OutputHistory.ready`); never rejects. */
  readonly ready?: () => Promise<void>;
}

/** A subscriber of `eventsAfter$` and the last seq it has been given (or skips up to). */
interface Reader {
  readonly subscriber: Subscriber<ProcessEvent>;
  afterSeq: number;
}

/**
 * A process's `OutputHistory` kept in an {@link PacedHistoryLog}. `append` queues the event in the log (it
 * never throws, never blocks; `log.pressure$` tells when the log's backlog is high) and delivers it to
 * the live subscribers at once.
 *
 * Unlike the in-memory `EventHistory`, `eventsAfter$` replays ASYNCHRONOUSLY: nothing is delivered
 * inside `subscribe`; the replay reads the log (files, then what is not yet written) at its own pace,
 * then joins the live subscribers in the turn it finds itself caught up, so there is no gap and no
 * duplicate. A reader that relies on a synchronous replay (the host's event stream pausing at a high
 * mark) must read through the log's pull API (`OutputLog.read`, `waitFor`) instead.
 *
 * A replay gives `truncated` markers where the log cannot give events, with a `reason`: the quota's
 * dropped range comes after the first segment (not first), damaged records where they were, and
 * after `release()` one marker for everything. A write failure of the log is not a process failure:
 * replays get a `writeFailed` marker for what it could not keep, then go live; the store's `failures$`
 * carries the error. A read error ends a replay with a `failed` event (OutputLogReadError).
 *
 * Teardown: the history holds no timers. It ends the log's writing (`closed`, `failed` or `release()`
 * seal it) but never closes it: the log belongs to whoever made it (the store closes its logs in
 * `close()`).
 */
export class PacedHistory<L extends PacedHistoryLog = PacedHistoryLog> implements OutputHistory {
  private readonly live = new Set<Reader>();
  private readonly readBytes: number;
  private lastSeq = 0;
  private appendedBytes = 0;
  private ended = false;
  private failure: FailedEvent | undefined;
  private released = false;
  private emitting = false;
  private readonly deferred: HistoryInput[] = [];

  constructor(
    /** The log the history keeps its events in (its owner reads `pressure$` and `failures$` there). */ readonly log: L,
    private readonly hooks: PacedHistoryHooks = {},
    options: PacedHistoryOptions = {},
  ) {
    this.readBytes = options.replayReadBytes ?? DEFAULT_REPLAY_READ_BYTES;
    // A log taken back after a restart already holds its process's output up to here.
    this.lastSeq = log.lastSeq;
  }

  /** Resolves once the process's metadata is on the disk (see `OutputHistory.ready`); never rejects. */
  ready(): Promise<void> {
    return this.hooks.ready?.() ?? Promise.resolve();
  }

  /** The log's first seq (its first segment is kept); after `release()`, the next seq to come. */
  get historyStartSeq(): number {
    return this.released ? this.lastSeq + 1 : this.log.firstSeq;
  }

  /** Events the log holds (0 once released). */
  get retainedEvents(): number {
    return this.released ? 0 : this.log.storedEvents;
  }

  /** Output bytes the log holds (0 once released). */
  get retainedBytes(): number {
    return this.released ? 0 : this.log.storedBytes;
  }

  /** Live subscribers (past their replay, not unsubscribed). */
  get subscriberCount(): number {
    return this.live.size;
  }

  /**
   * Queues the event in the log and delivers it to the live subscribers; `closed` or `failed` ends
   * the history (completes every subscriber). An append from inside a subscriber's callback is
   * delivered after the current one. Never throws.
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
   * The events after `afterSeq`: the replay from the log (asynchronous, see the class doc), then live
   * ones. Completes after `closed`; a failure is a `failed` value, then completion; it never errors.
   * Unsubscribing stops the replay and leaves the live set.
   */
  eventsAfter$(afterSeq: number): Observable<ProcessEvent> {
    return new Observable<ProcessEvent>((subscriber) => {
      const reader: Reader = { subscriber, afterSeq: Math.max(0, afterSeq) };
      void this.replay(reader);
      return () => {
        this.live.delete(reader);
      };
    });
  }

  /** Later subscribers get one `released` marker; the log takes no more events (the store may remove it first). Idempotent. */
  release(): void {
    this.letGo(this.hooks.onRelease);
  }

  /** As {@link release}, for a process that never ran: the store drops what it kept of it (`OutputHistory.discard`). Idempotent. */
  discard(): void {
    this.letGo(this.hooks.onDiscard ?? this.hooks.onRelease);
  }

  /** The log takes no more events, and the store hears it (`told`) once. */
  private letGo(told: (() => void) | undefined): void {
    if (this.released) return;
    this.released = true;
    void this.log.seal();
    told?.();
  }

  private process(event: HistoryInput): void {
    if (this.ended) return;
    if (event.type === 'failed') {
      this.failure = event;
      this.finish();
      void this.log.seal();
      this.hooks.onFailed?.(lostReasonOf(event));
      return;
    }
    if (event.type === 'truncated') {
      // The seqs before nextSeq will never come: the log records the hole (readers get it as an `evicted` marker).
      if (event.nextSeq <= this.lastSeq + 1) return;
      if (!this.released) this.log.appendGap(event.nextSeq, event.droppedBytes);
      this.lastSeq = event.nextSeq - 1;
      for (const reader of this.live) reader.subscriber.next(event);
      return;
    }
    this.lastSeq = event.seq;
    this.appendedBytes += event.type === 'output' ? event.chunk.byteLength : 0;
    if (!this.released) this.log.append(event);
    for (const reader of this.live) if (event.seq > reader.afterSeq) reader.subscriber.next(event);
    if (event.type === 'closed') this.finish();
  }

  private finish(): void {
    this.ended = true;
    const readers = [...this.live];
    this.live.clear();
    for (const reader of readers) this.end(reader);
  }

  private end(reader: Reader): void {
    if (this.failure !== undefined) reader.subscriber.next(this.failure);
    reader.subscriber.complete();
  }

  /** Reads the log from the reader's cursor until caught up, then joins the live set (in that same turn). */
  private async replay(reader: Reader): Promise<void> {
    const subscriber = reader.subscriber;
    try {
      while (!subscriber.closed) {
        if (reader.afterSeq >= this.lastSeq) return this.join(reader);
        if (this.released) {
          this.deliver(reader, truncatedRange('released', reader.afterSeq + 1, this.lastSeq, this.appendedBytes));
          continue;
        }
        const read = await this.log.read(reader.afterSeq, this.readBytes);
        if (subscriber.closed) return;
        for (const event of read.events) this.deliver(reader, event);
        if (read.events.length > 0 || reader.afterSeq >= this.lastSeq) continue;
        // The log has nothing more and takes nothing more (removed, failed): a marker for the rest.
        if (read.ended) this.deliver(reader, truncatedRange(this.log.failure === undefined ? 'evicted' : 'writeFailed', reader.afterSeq + 1, this.lastSeq, 0));
        else await this.log.waitFor(reader.afterSeq);
      }
    } catch (error: unknown) {
      if (subscriber.closed) return;
      subscriber.next({ type: 'failed', error: readError(this.log.processId, error) });
      subscriber.complete();
    }
  }

  private deliver(reader: Reader, event: LogEvent): void {
    if (event.type === 'failed') return; // the log's write failure: its marker came before it
    if (event.type === 'truncated') {
      reader.subscriber.next(event);
      reader.afterSeq = Math.max(reader.afterSeq, event.toSeq);
      return;
    }
    if (event.seq <= reader.afterSeq) return;
    reader.afterSeq = event.seq;
    reader.subscriber.next(untimed(event));
  }

  private join(reader: Reader): void {
    if (this.ended) this.end(reader);
    else this.live.add(reader);
  }
}

/** The replayed event in the library's shape (live events are the appended objects: no `time` either). */
function untimed(event: TimedEvent): SequencedEvent {
  switch (event.type) {
    case 'output':
      return { type: 'output', seq: event.seq, stream: event.stream, chunk: event.chunk };
    case 'exited':
      return { type: 'exited', seq: event.seq, exitCode: event.exitCode, sandboxDenied: event.sandboxDenied };
    case 'closed':
      return { type: 'closed', seq: event.seq };
  }
}

/** The error a replay ends with: the log's typed read error (anything else is a bug, reported the same way). */
const readError = (processId: string, error: unknown): ExecClientError => (error instanceof ExecClientError ? error : new OutputLogReadError(processId, 'UNKNOWN'));
