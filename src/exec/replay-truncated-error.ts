import { ExecClientError } from '../errors';
import type { TruncatedEvent } from './process-event';

/**
 * A byte or text view met a `truncated` marker: part of the process's output was dropped from the
 * replay history before this subscriber arrived, so the view cannot be complete. Same `code` as
 * ProcessGapError (`PROCESS_GAP`): both mean "output is missing". Pass `{ allowTruncated: true }` to a
 * view to accept the loss instead.
 */
export class ReplayTruncatedError extends ExecClientError {
  readonly code = 'PROCESS_GAP';
  /** The seq of the first event the subscriber did receive. */
  readonly nextSeq: number;
  /** How many events were dropped before it. */
  readonly droppedEvents: number;
  /** How many output bytes those events held. */
  readonly droppedBytes: number;

  constructor(marker: TruncatedEvent) {
    super(
      `process history was truncated before this subscriber: ${marker.droppedEvents} event(s) ` +
        `(${marker.droppedBytes} output bytes) before sequence ${marker.nextSeq} were dropped`,
    );
    this.nextSeq = marker.nextSeq;
    this.droppedEvents = marker.droppedEvents;
    this.droppedBytes = marker.droppedBytes;
  }
}
