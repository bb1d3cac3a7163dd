/**
 * The read side of an output log: the events after a cursor, up to a byte budget, from the segment
 * files (starting at the sparse index entry before the wanted seq, never at the segment's start when
 * an entry is nearer), then from memory (taken, not yet written): no hole between the two, since a
 * write's events leave memory in the same turn the segment's written size grows. Every range the log
 * cannot give becomes one `truncated` marker: the quota's dropped range, damaged records, what was
 * taken after a write failure, a removed log.
 */
import { OutputLogReadError } from '../../../errors';
import type { LogEvent, LogRead, LogTruncatedEvent } from '../../log-events';
import { truncatedRange } from '../../log-events';
import type { StoredEvent } from './stored-event';
import type { LogFile } from './log-fs';
import { errnoOf } from '../../errno';
import type { LogState } from './log-state';
import type { DroppedRange } from './manifest';
import { RECORD_HEADER_BYTES } from './record';
import type { Segment } from './segment';
import type { ScanItem } from './segment-scan';
import { scanRecords } from './segment-scan';
import { SparseIndex } from './sparse-index';

/** Rounds without progress before a read gives up for now (a segment removed under it, say). */
const MAX_STALLS = 3;

const payloadOf = (event: StoredEvent): number => (event.type === 'output' ? event.chunk.byteLength : 0);

/** One read of one log: walks from the cursor through the gaps, the files and memory. */
export class LogReadRun {
  private readonly events: LogEvent[] = [];
  /** Where the events served from memory begin (see `LogRead.memoryFrom`). */
  private memoryFrom: number | undefined;
  private cursor: number;
  private budget: number;

  constructor(
    private readonly state: LogState,
    afterSeq: number,
    maxBytes: number,
    /** Bytes read from a file at a time. */ private readonly windowBytes: number,
  ) {
    this.cursor = Math.max(0, afterSeq);
    this.budget = maxBytes;
  }

  /**
   * The read's answer when it needs no file: what memory (and the markers before it) gives from the
   * cursor; undefined, with nothing taken, when the next event the cursor wants is in a file. A reader
   * that keeps up gets every read this way, without the promise turns of {@link LogReadRun.run}.
   */
  runInMemory(): LogRead | undefined {
    for (let stalls = 0; stalls < MAX_STALLS; ) {
      const step = this.nextStep();
      if (step === 'done') break;
      if (step === 'marked') continue;
      if (step === 'file') {
        if (this.events.length === 0) return undefined;
        break; // the markers so far; the next read goes to the file
      }
      const before = this.cursor;
      this.fromMemory(this.cursor + 1);
      stalls = this.cursor === before ? stalls + 1 : 0;
    }
    this.markUnfound();
    return this.finish();
  }

  /** The read's answer; rejects with OutputLogReadError when a file cannot be read. */
  async run(): Promise<LogRead> {
    for (let stalls = 0; stalls < MAX_STALLS; ) {
      const step = this.nextStep();
      if (step === 'done') break;
      if (step === 'marked') continue;
      const before = this.cursor;
      if (step === 'memory') this.fromMemory(this.cursor + 1);
      else await this.fromSegment(this.cursor + 1);
      stalls = this.cursor === before ? stalls + 1 : 0;
    }
    this.markUnfound();
    return this.finish();
  }

  /**
   * Where the next seq comes from: `done` (the budget is spent, or the cursor is at what the log holds),
   * `marked` (a marker was given for it: the log cannot hold it), else `memory` or a `file`.
   */
  private nextStep(): 'done' | 'marked' | 'memory' | 'file' {
    if (this.events.length > 0 && this.budget <= 0) return 'done';
    const want = this.cursor + 1;
    if (want > this.state.heldSeq) return 'done';
    if (this.skipGap(want)) return 'marked';
    return this.state.memorySeq <= want ? 'memory' : 'file';
  }

  /**
   * After rounds without progress, with nothing given and more held: the seqs from the cursor up to the
   * next one the log can place (a later segment's first, or memory's) are not where they should be. One
   * `corrupt` marker covers them, so a reader always moves on (a reader that got nothing and is not
   * caught up would read again at once, for ever).
   */
  private markUnfound(): void {
    const want = this.cursor + 1;
    if (this.events.length > 0 || want > this.state.heldSeq) return;
    const next = Math.min(this.state.segments.find((segment) => segment.baseSeq > want)?.baseSeq ?? Infinity, this.state.memorySeq, this.state.heldSeq + 1);
    if (next > want) this.mark(truncatedRange('corrupt', want, next - 1, 0));
  }

  /** Gives a marker for `want` when the log cannot hold it (removed, before its start, dropped); true when it did. */
  private skipGap(want: number): boolean {
    const state = this.state;
    const dropped = state.dropped;
    if (state.end === 'removed') this.mark(truncatedRange('evicted', want, state.heldSeq, 0));
    else if (want < state.firstSeq) this.mark(truncatedRange('evicted', want, state.firstSeq - 1, 0));
    else if (dropped !== undefined && want >= dropped.fromSeq && want <= dropped.toSeq) this.mark(quotaMarker(dropped, want));
    else return false;
    return true;
  }

  private mark(marker: LogEvent & { readonly type: 'truncated' }): void {
    this.events.push(marker);
    this.cursor = Math.max(this.cursor, marker.toSeq);
  }

  /** Gives a stored event: an event as it is, a recorded hole as an `evicted` marker for the seqs of it not yet covered. */
  private give(event: StoredEvent): void {
    if (event.type === 'gap') {
      const fromSeq = Math.max(event.fromSeq, this.cursor + 1);
      if (fromSeq <= event.seq) this.mark(truncatedRange('evicted', fromSeq, event.seq, fromSeq === event.fromSeq ? event.droppedBytes : 0));
      return;
    }
    this.events.push(event);
    this.cursor = event.seq;
    this.budget -= payloadOf(event);
  }

  private fromMemory(want: number): void {
    const memory = this.state.memory;
    for (let i = this.state.memoryIndex(want); i < memory.length; i += 1) {
      const event = memory.at(i);
      if (event === undefined) break;
      this.memoryFrom ??= this.events.length;
      this.give(event);
      if (this.budget <= 0) break;
    }
  }

  private async fromSegment(want: number): Promise<void> {
    const segment = this.state.segmentFor(want);
    if (segment === undefined) return;
    // A consistent snapshot: the writer grows both together, after the bytes are in the file.
    const end = segment.fileBytes;
    const lastSeq = segment.writtenSeq;
    if (want > lastSeq) return;
    const index = await this.indexOf(segment, end);
    const file = await this.openSegment(segment);
    if (file === undefined) return;
    try {
      const entry = index.floor(want);
      const complete = await this.scan(file, { segment, end, lastSeq, want, index, entry: entry ?? { seq: segment.baseSeq, offset: 0 } });
      // The index entry did not hold its record: read the segment from its start instead.
      if (complete === 'badEntry') await this.scan(file, { segment, end, lastSeq, want, index: new SparseIndex(), entry: { seq: segment.baseSeq, offset: 0 } });
    } catch (error: unknown) {
      throw new OutputLogReadError(this.state.processId, errnoOf(error));
    } finally {
      await file.close().catch(() => undefined);
    }
  }

  /** Reads one segment from `entry` on; 'badEntry' when the record at the entry is not the entry's. */
  private async scan(file: LogFile, at: SegmentScan): Promise<'done' | 'budget' | 'badEntry'> {
    const boundaries = at.index.entriesAfter(at.entry.offset).filter((entry) => entry.offset < at.end);
    const range = { file, from: at.entry.offset, end: at.end, afterSeq: at.entry.seq - 1, boundaries, windowBytes: this.windowBytes };
    let expected = at.entry.seq;
    let first = true;
    for await (const item of scanRecords(range)) {
      if (first && at.entry.offset > 0 && (item.type !== 'record' || item.event.seq !== at.entry.seq)) return 'badEntry';
      first = false;
      expected = this.take(item, expected, at);
      if (this.budget <= 0 && this.events.length > 0) return 'budget';
      if (item.type === 'damage' && item.resume === undefined) break;
    }
    // The file ended before the segment's last seq (damage at its end, or a file shorter than expected).
    const fromSeq = Math.max(expected, at.want, this.cursor + 1);
    if (fromSeq <= at.lastSeq) this.mark(truncatedRange('corrupt', fromSeq, at.lastSeq, 0));
    return 'done';
  }

  /** Takes one scanned item; returns the seq expected next. */
  private take(item: ScanItem, expected: number, at: SegmentScan): number {
    if (item.type === 'record') {
      const seq = item.event.seq;
      const fromSeq = Math.max(expected, at.want);
      if (item.event.type === 'gap') {
        // A recorded hole: what lies before it is damage, the hole itself is given as recorded.
        if (item.event.fromSeq > fromSeq) this.mark(truncatedRange('corrupt', fromSeq, item.event.fromSeq - 1, 0));
        if (seq >= at.want && seq > this.cursor) this.give(item.event);
        return seq + 1;
      }
      if (seq > fromSeq) this.mark(truncatedRange('corrupt', fromSeq, seq - 1, 0)); // good records around a hole
      if (seq >= at.want && seq > this.cursor) this.give(item.event);
      return seq + 1;
    }
    const toSeq = item.resume === undefined ? at.lastSeq : item.resume.seq - 1;
    const fromSeq = Math.max(expected, at.want);
    const damagedBytes = item.end - item.offset - RECORD_HEADER_BYTES * (toSeq - expected + 1);
    if (toSeq >= fromSeq) this.mark(truncatedRange('corrupt', fromSeq, toSeq, damagedBytes));
    return toSeq + 1;
  }

  private async indexOf(segment: Segment, end: number): Promise<SparseIndex> {
    if (segment.index !== undefined) return segment.index;
    try {
      const data = await this.state.fs.readFile(segment.indexPath);
      segment.index ??= SparseIndex.decode(data ?? Buffer.alloc(0), end);
    } catch {
      return new SparseIndex(); // a hint only: read from the segment's start
    }
    return segment.index;
  }

  /** The segment file open for reading; undefined when it is gone (dropped or removed meanwhile). */
  private async openSegment(segment: Segment): Promise<LogFile | undefined> {
    try {
      return await this.state.fs.open(segment.path, 'read');
    } catch (error: unknown) {
      if (errnoOf(error) === 'ENOENT') return undefined;
      throw new OutputLogReadError(this.state.processId, errnoOf(error));
    }
  }

  private finish(): LogRead {
    const state = this.state;
    let ended = false;
    if (this.cursor >= state.heldSeq) {
      if (state.failure !== undefined) {
        if (state.lastSeq > this.cursor) this.mark(truncatedRange('writeFailed', this.cursor + 1, state.lastSeq, state.lostBytes));
        this.events.push({ type: 'failed', error: state.failure });
        ended = true;
      } else {
        ended = state.end !== undefined;
      }
    }
    return { events: this.events, lastSeq: this.cursor, caughtUp: this.cursor >= state.heldSeq, ended, memoryFrom: this.memoryFrom ?? this.events.length };
  }
}

/** Where one segment scan stands. */
interface SegmentScan {
  readonly segment: Segment;
  readonly end: number;
  readonly lastSeq: number;
  readonly want: number;
  readonly index: SparseIndex;
  readonly entry: { readonly seq: number; readonly offset: number };
}

/**
 * The quota's marker for a reader that wants `want`: from `want` to the range's end, never claiming a seq
 * the reader had. Its bytes are exact when `want` starts the range or follows a widening the reader got
 * an earlier marker for (the bytes dropped since); when `want` falls inside a segment dropped after the
 * reader had read part of it, they also count that segment's part the reader had (at most one segment's
 * worth more).
 */
function quotaMarker(dropped: DroppedRange, want: number): LogTruncatedEvent {
  let before = { toSeq: dropped.fromSeq - 1, bytes: 0 };
  for (const step of dropped.steps ?? []) if (step.toSeq < want) before = step;
  return truncatedRange('quota', want, dropped.toSeq, dropped.bytes - before.bytes);
}
