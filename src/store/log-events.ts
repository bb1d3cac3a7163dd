/**
 * What a log store's paced reader hands out (`PacedLogReader.read`): the process's sequenced events with
 * the host's receipt time, `truncated` markers for what the log cannot give (dropped by its quota,
 * damaged, never written), and the log's own write failure.
 */
import type { OutputLogError } from '../errors';
import type { TruncatedEvent } from '../exec/process-event';
import type { ClosedEvent, ExitedEvent, OutputEvent, SequencedEvent } from '../wire/process-event';

/** An event with the time the host received it (ms since the epoch, from the log's scheduler). */
export type Timed<E extends SequencedEvent> = E & {
  /** When the host received the event: ms since the epoch, by the log's scheduler. */
  readonly time: number;
};

/** A sequenced event as the log keeps it: the library's shape plus its receipt `time`. */
export type TimedEvent = Timed<OutputEvent> | Timed<ExitedEvent> | Timed<ClosedEvent>;

/**
 * Why a log cannot give a range of seqs: `quota` (whole segments dropped between the first and the
 * newest ones to keep the process within its quota), `corrupt` (a record failed its CRC or its framing
 * on disk; never served), `writeFailed` (taken while the disk refused writes, never written), `released`
 * (the owner released the history), `evicted` (the log does not hold them at all: the store removed the
 * whole log, by its total bound or its retention, while a reader was on it; or they come before the
 * log's first seq, never recorded).
 */
export type TruncationReason = 'quota' | 'corrupt' | 'writeFailed' | 'released' | 'evicted';

/**
 * The library's {@link TruncatedEvent}, extended compatibly: it still says where reading goes on
 * (`nextSeq` = `toSeq + 1`) and how much is missing, and adds why and which seqs.
 *
 * - `reason`: why the range is missing (new).
 * - `fromSeq`, `toSeq`: the first and last missing seq, inclusive (new).
 * - `droppedEvents`: `toSeq - fromSeq + 1`, exact.
 * - `droppedBytes`: the output bytes those events held; exact for `quota` (counted when the segments
 *   went) and `writeFailed`; for `corrupt`, the damaged file bytes less one record header per missing
 *   event (exact when only payload bytes were damaged).
 */
export interface LogTruncatedEvent extends TruncatedEvent {
  /** Why the range is missing. */
  readonly reason: TruncationReason;
  /** The first missing seq. */
  readonly fromSeq: number;
  /** The last missing seq (`nextSeq - 1`). */
  readonly toSeq: number;
}

/** Builds a {@link LogTruncatedEvent} for the seqs `fromSeq..toSeq` (inclusive). */
export const truncatedRange = (reason: TruncationReason, fromSeq: number, toSeq: number, droppedBytes: number): LogTruncatedEvent => ({
  type: 'truncated',
  reason,
  fromSeq,
  toSeq,
  nextSeq: toSeq + 1,
  droppedEvents: toSeq - fromSeq + 1,
  droppedBytes: Math.max(0, droppedBytes),
});

/** The log's own failure, as the library's `failed` shape: the disk refused a write (ENOSPC, EIO). */
export interface LogFailedEvent {
  /** The event's kind. */
  readonly type: 'failed';
  /** What the disk refused. */
  readonly error: OutputLogError;
}

/** What a read gives, in seq order: events, markers for missing ranges, and at the end the log's failure. */
export type LogEvent = TimedEvent | LogTruncatedEvent | LogFailedEvent;

/** One answer of `PacedLogReader.read`. */
export interface LogRead {
  /**
   * The events after the cursor, in seq order, within the byte budget (at least one when any is
   * held): records, `truncated` markers for ranges the log cannot give, and last the log's `failed`
   * event once a reader has everything the log holds and the log failed.
   */
  readonly events: readonly LogEvent[];
  /** The cursor to read after next time: the last seq given or covered by a marker (the one read after, when none). */
  readonly lastSeq: number;
  /** Nothing more is held after `lastSeq` right now: wait for an append (`PacedLogReader.waitFor`) before reading again. */
  readonly caughtUp: boolean;
  /**
   * Nothing more will ever come: `closed` was given, the log failed (its `failed` event was given), or
   * the log takes no more appends (sealed, closed, removed) and `lastSeq` is its last seq.
   */
  readonly ended: boolean;
  /**
   * The index in `events` of the first event served from memory (taken, not yet written; `events.length`
   * when none). Those are the log's own objects, the same for every reader, so what is made of them (an
   * SSE frame) can be shared; the events before it were read from a file for this read alone.
   */
  readonly memoryFrom: number;
}
