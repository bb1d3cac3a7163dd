/**
 * The state one output log's writer and readers share: its segments, what its quota dropped, the
 * events taken but not yet in a file, and how it ended. Plain bookkeeping, no I/O.
 */
import type { OutputLogError } from '../../../errors';
import { RingDeque } from '../../../exec/ring-deque';
import type { StoredEvent } from './stored-event';
import type { LogFs } from './log-fs';
import type { DroppedRange } from './manifest';
import type { Segment } from './segment';

/** Why a log takes no more appends. */
export type LogEnd = 'closed' | 'failed' | 'sealed' | 'removed';

/** The shared state of one log (see the module's doc). */
export class LogState {
  /** The segments, in seq order. The writer adds at the end; the quota removes from the middle. */
  readonly segments: Segment[] = [];
  /** What the quota (or the store's bound) dropped between the first segment and the rest. */
  dropped: DroppedRange | undefined;
  /** Segments the quota (or the store's bound) dropped, ever (the host's metrics). */
  droppedSegments = 0;
  /** Events taken and not yet in a file (queued or being written), in seq order. */
  readonly memory = new RingDeque<StoredEvent>(16);
  /** The last seq appended; after a failure it goes on counting the events that could not be kept. */
  lastSeq = 0;
  /** The last seq held: in a file or in memory. */
  heldSeq = 0;
  /** The write failure, once the disk refused. */
  failure: OutputLogError | undefined;
  /** Events appended after the failure (not kept). */
  lostEvents = 0;
  /** Output bytes appended after the failure (not kept). */
  lostBytes = 0;
  /** Why the log takes no more appends, once it does not. */
  end: LogEnd | undefined;

  constructor(
    /** The log's directory. */ readonly dir: string,
    /** The process the log belongs to (for errors). */ readonly processId: string,
    /** The file system. */ readonly fs: LogFs,
  ) {}

  /** The first seq the log holds or held (its first segment's), or the next to come when it has none. */
  get firstSeq(): number {
    return this.segments[0]?.baseSeq ?? this.lastSeq + 1;
  }

  /** The segment taking appends (the last one), if any. */
  get active(): Segment | undefined {
    return this.segments[this.segments.length - 1];
  }

  /** Bytes of the log's segments: written plus queued. */
  get diskBytes(): number {
    let total = 0;
    for (const segment of this.segments) total += segment.takenBytes;
    return total;
  }

  /** The segment that holds (or would hold) `seq`: the last whose first seq is at most `seq`. */
  segmentFor(seq: number): Segment | undefined {
    let found: Segment | undefined;
    for (const segment of this.segments) {
      if (segment.baseSeq > seq) break;
      found = segment;
    }
    return found;
  }

  /** The segment after `segment`, if any. */
  segmentAfter(segment: Segment): Segment | undefined {
    const at = this.segments.indexOf(segment);
    return at < 0 ? undefined : this.segments[at + 1];
  }

  /** The first seq held in memory (Infinity when none). */
  get memorySeq(): number {
    const first = this.memory.peek();
    if (first === undefined) return Infinity;
    return first.type === 'gap' ? first.fromSeq : first.seq; // a hole holds its range from its first seq
  }

  /** The position in memory of the first event whose seq is at least `seq`. */
  memoryIndex(seq: number): number {
    let low = 0;
    let high = this.memory.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((this.memory.at(mid)?.seq ?? Infinity) < seq) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** Drops from memory the events up to `seq`: they are in a file now. */
  written(seq: number): void {
    for (let first = this.memory.peek(); first !== undefined && first.seq <= seq; first = this.memory.peek()) this.memory.shift();
  }
}
