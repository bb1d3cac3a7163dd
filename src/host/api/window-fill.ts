/**
 * Filling a subscriber's gap from the executor's retained window: what a `process/read` gives between the
 * subscriber's last seq and the first seq the host's history still holds, as the events to send, and a
 * `truncated` marker only for the seqs neither reaches (docs/protocol.md#reading-with-a-cursor).
 *
 * The window keeps the newest ~1 MiB of output and evicts from the front only, and exit and close are
 * never chunks. So inside the window (after its first chunk) the one seq no chunk carries is the exit;
 * before its first chunk a seq without a chunk is unknown (an evicted chunk, or an exit we cannot place):
 * those are the marker's. The close is in the gap only when the host's history of a closed process holds
 * nothing (it was released, or evicted): then it is the gap's last seq.
 */
import type { SequencedEvent } from '../../wire/process-event';
import type { ReadResponse } from '../../wire/process';

/** One step of a fill: an event to send, or a marker for seqs neither the history nor the window has. */
export type FillItem =
  | { readonly kind: 'event'; readonly event: SequencedEvent }
  | { readonly kind: 'truncated'; readonly nextSeq: number; readonly droppedEvents: number };

/** What is known of the gap `(cursor, until)`. */
export interface FillGap {
  /** The last seq the subscriber has. */
  readonly cursor: number;
  /** The first seq the host's history holds (or will: the next one, when it holds none). */
  readonly until: number;
  /** The close's seq, when it lies in the gap (a closed process whose history holds nothing). */
  readonly closeSeq?: number | undefined;
}

/**
 * The items that take a subscriber from `gap.cursor` on, in seq order, up to the gap's end or what the
 * executor had assigned when it answered (`read.nextSeq`, whichever is first: seqs the host saw after the
 * read are for the next read, not a marker). Every seq is either an event or counted by exactly one
 * marker, whose `nextSeq` names the seq that follows it. The last item's seq (or marker's `nextSeq - 1`)
 * is the subscriber's new cursor; nothing when the read reaches nothing past `gap.cursor`.
 */
export function planFill(read: ReadResponse, gap: FillGap): FillItem[] {
  const { cursor, closeSeq } = gap;
  const until = Math.min(gap.until, read.nextSeq);
  const chunks = new Map(read.chunks.filter((c) => c.seq > cursor && c.seq < until).map((c) => [c.seq, c]));
  let windowStart = Number.POSITIVE_INFINITY;
  for (const seq of chunks.keys()) windowStart = Math.min(windowStart, seq);
  let exitUnplaced = read.exited && read.exitCode !== null;
  const items: FillItem[] = [];
  let unknownFrom: number | undefined;
  const known = (seq: number): void => {
    if (unknownFrom === undefined) return;
    items.push({ kind: 'truncated', nextSeq: seq, droppedEvents: seq - unknownFrom });
    unknownFrom = undefined;
  };
  for (let seq = cursor + 1; seq < until; seq += 1) {
    const chunk = chunks.get(seq);
    if (chunk !== undefined) {
      known(seq);
      items.push({ kind: 'event', event: { type: 'output', seq, stream: chunk.stream, chunk: chunk.chunk } });
    } else if (seq === closeSeq) {
      known(seq);
      items.push({ kind: 'event', event: { type: 'closed', seq } });
    } else if (exitUnplaced && read.exitCode !== null && seq > windowStart) {
      known(seq);
      items.push({ kind: 'event', event: { type: 'exited', seq, exitCode: read.exitCode, sandboxDenied: read.sandboxDenied } });
      exitUnplaced = false;
    } else {
      unknownFrom ??= seq;
    }
  }
  known(until);
  return items;
}
