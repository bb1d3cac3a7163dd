import type { ExecClientError } from '../errors';
import type { SequencedEvent } from '../wire/process-event';

/** The process failed on our side (recovery gap, environment failure, overflow). Terminal, unsequenced. */
export interface FailedEvent {
  /** The event's kind. */
  readonly type: 'failed';
  /** Why the process failed (ProcessGapError, ProcessFailedError, ReorderOverflowError, ...). */
  readonly error: ExecClientError;
}

/**
 * History was dropped before this subscriber arrived (bounded replay). Unsequenced; the events that
 * follow it start at `nextSeq` and are contiguous.
 */
export interface TruncatedEvent {
  /** The event's kind. */
  readonly type: 'truncated';
  /** The seq of the first event that follows the marker. */
  readonly nextSeq: number;
  /** How many events were dropped before it. */
  readonly droppedEvents: number;
  /** How many output bytes those events held. */
  readonly droppedBytes: number;
}

/** What `ExecProcess.events$` emits. */
export type ProcessEvent = SequencedEvent | FailedEvent | TruncatedEvent;
