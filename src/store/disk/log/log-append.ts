/**
 * What an append does to a log's state, before its readers hear of it: an event in seq order is taken by
 * the writer (with a hole recorded for the seqs it skips); an event after the log failed is counted as
 * lost (its readers get a `writeFailed` marker for it); anything else is ignored. A chunk no record can
 * hold, or one the host has no memory to queue, fails the log, and the event is then lost.
 */
import type { SchedulerLike } from 'rxjs';
import type { SequencedEvent } from '../../../wire/process-event';
import type { LogState } from './log-state';
import type { LogWriter } from './log-writer';
import { MAX_RECORD_PAYLOAD_BYTES } from './record';

/** What became of an append: taken (readers hear of it), lost (after a failure: counted), ignored. */
export type AppendOutcome = 'taken' | 'lost' | 'ignored';

/** A receipt time: the scheduler's ms, a whole non-negative number. */
const timeOf = (scheduler: SchedulerLike): number => Math.max(0, Math.floor(scheduler.now()));

/** Takes `event` into `state` through `writer` (see the module's doc). Never throws. */
export function takeEvent(state: LogState, writer: LogWriter | undefined, event: SequencedEvent, scheduler: SchedulerLike): AppendOutcome {
  if (state.failure !== undefined && event.seq > state.lastSeq) {
    state.lastSeq = event.seq;
    state.lostEvents += 1;
    state.lostBytes += event.type === 'output' ? event.chunk.byteLength : 0;
    return 'lost';
  }
  if (writer === undefined || state.end !== undefined || !(Number.isSafeInteger(event.seq) && event.seq > state.lastSeq)) return 'ignored';
  if (event.type === 'output' && event.chunk.byteLength > MAX_RECORD_PAYLOAD_BYTES) {
    writer.fail('write', { code: 'EFBIG' });
    return takeEvent(state, writer, event, scheduler);
  }
  try {
    const time = timeOf(scheduler);
    // A seq that skips some: the skipped ones are recorded as a hole, never silently missing.
    if (state.lastSeq > 0 && event.seq > state.lastSeq + 1) writer.take({ type: 'gap', seq: event.seq - 1, fromSeq: state.lastSeq + 1, droppedBytes: 0 }, time);
    writer.take(event, time);
  } catch (error: unknown) {
    // No room for its write buffer (or a value no record can hold): what the log cannot keep fails it.
    writer.fail('write', error);
    return takeEvent(state, writer, event, scheduler);
  }
  return 'taken';
}

/**
 * Records in `state` that the seqs after its last one up to `nextSeq - 1` will never come, with their bytes
 * when known. False when nothing was recorded (nothing skipped, the log takes no appends, or its write
 * buffer could not be had: that fails the log). Never throws.
 */
export function takeGap(state: LogState, writer: LogWriter | undefined, nextSeq: number, droppedBytes: number, scheduler: SchedulerLike): boolean {
  if (writer === undefined || state.end !== undefined || state.failure !== undefined || !Number.isSafeInteger(nextSeq) || nextSeq <= state.lastSeq + 1) return false;
  try {
    writer.take({ type: 'gap', seq: nextSeq - 1, fromSeq: state.lastSeq + 1, droppedBytes: Math.max(0, Math.floor(droppedBytes)) }, timeOf(scheduler));
  } catch (error: unknown) {
    writer.fail('write', error);
    return false;
  }
  return true;
}
