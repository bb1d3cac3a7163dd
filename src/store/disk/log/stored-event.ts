/**
 * What a disk log keeps per record: an event with its receipt time, or a hole it records (a range of
 * seqs that will never come), which every seq-ordered structure of the log holds like an event.
 */
import type { TimedEvent } from '../../log-events';

/**
 * A hole the log records: seqs `fromSeq`..`seq` will never come (the executor no longer had
 * them when a restarted host took its process back, or they were skipped). Kept as a record of its own
 * whose seq is the last missing one, so every seq-ordered structure (segments, index, memory, recovery)
 * holds it like an event; a reader gives it as a `truncated` marker with reason `evicted`.
 */
export interface GapRecord {
  readonly type: 'gap';
  /** The last missing seq. */
  readonly seq: number;
  /** The first missing seq. */
  readonly fromSeq: number;
  /** Output bytes in the range, when known (else 0). */
  readonly droppedBytes: number;
}

/** What a segment record (or the log's memory) holds: an event with its time, or a recorded hole. */
export type StoredEvent = TimedEvent | (GapRecord & { readonly time: number });
