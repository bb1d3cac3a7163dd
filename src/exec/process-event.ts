import type { ExecClientError } from '../errors';
import type { SequencedEvent } from '../wire/process-event';

/** The process failed on our side (recovery gap, environment failure, overflow). Terminal, unsequenced. */
export interface FailedEvent {
  readonly type: 'failed';
  readonly error: ExecClientError;
}

/**
 * History was dropped before this subscriber arrived (bounded replay). Unsequenced; the events that
 * follow it start at `nextSeq` and are contiguous.
 */
export interface TruncatedEvent {
  readonly type: 'truncated';
  readonly nextSeq: number;
  readonly droppedEvents: number;
  readonly droppedBytes: number;
}

/** What `ExecProcess.events$` emits. */
export type ProcessEvent = SequencedEvent | FailedEvent | TruncatedEvent;

/** Payload bytes an event holds (what history and reorder limits count). */
export const eventBytes = (event: ProcessEvent): number => (event.type === 'output' ? event.chunk.byteLength : 0);
