/**
 * The write side of an output log: appends are copied into pooled write buffers (one buffer holds many
 * records) and written by one loop, every buffer queued for a segment in one `writev` call;
 * segments roll at their size; the sparse index follows the data (`./index-writer`); the quota trims
 * after writes. The
 * unwritten backlog drives backpressure: over the high mark the caller is told to pause, below the
 * low mark it may go on. A failed write (ENOSPC, EIO) fails the log: what is in its files stays, what was
 * taken stays in memory for readers, nothing more is taken.
 */
import type { SchedulerLike } from 'rxjs';
import { BehaviorSubject } from 'rxjs';
import type { LogWriteOperation } from '../../../errors';
import { OutputLogError } from '../../../errors';
import type { SequencedEvent } from '../../../wire/process-event';
import type { BufferPool } from './buffer-pool';
import type { GapRecord, StoredEvent } from './stored-event';
import type { LogFile } from './log-fs';
import { errnoOf } from '../../errno';
import { LogTrimmer } from './log-quota';
import type { LogState } from './log-state';
import { LogSync } from './log-sync';
import { recordBytes, writeRecord } from './record';
import { Segment } from './segment';
import { SparseIndex } from './sparse-index';
import { IndexWriter } from './index-writer';

/** The writer's settings (resolved from the log's options; see `OutputLogOptions` for each). */
export interface WriterSettings {
  /** Bytes at which a segment rolls. */
  readonly segmentBytes: number;
  /** Bytes between sparse index entries. */
  readonly indexIntervalBytes: number;
  /** The log's quota. */
  readonly quotaBytes: number;
  /** Backlog at which the caller is told to pause. */
  readonly highWaterBytes: number;
  /** Backlog at which it may go on. */
  readonly lowWaterBytes: number;
  /** The least time between two timed syncs. */
  readonly syncIntervalMs: number;
  /** The clock and the sync timer. */
  readonly scheduler: SchedulerLike;
  /** The write buffers. */
  readonly pool: BufferPool;
  /** Resolves when the log's directory may be made (a replaced log's files are gone); rejects to fail the log. */
  readonly ready: Promise<void>;
  /** Called once when the log fails. */
  readonly onFailure: (error: OutputLogError) => void;
  /** Called when the log rolls a segment (the store checks its bound). */
  readonly onRoll: () => void;
  /** Called after each fdatasync with its wall-clock ms. @default none */
  readonly onSync?: (ms: number) => void;
}

/** The most buffers one write takes (well under IOV_MAX, 1024 on Linux). */
export const MAX_BUFFERS_PER_WRITE = 64;

/** A write buffer of one segment, filling or queued. */
interface Batch {
  readonly segment: Segment;
  readonly buffer: Buffer;
  used: number;
  lastSeq: number;
}

/** Writes one log (see the module's doc). */
export class LogWriter {
  /** Whether the backlog is over the high mark (true) or back under the low mark (false); replays the current. */
  readonly pressure = new BehaviorSubject<boolean>(false);
  private readonly queue: Batch[] = [];
  private backlog = 0;
  private draining: Promise<void> | undefined;
  private urgent = false;
  private madeDir = false;
  private rollNext = false;
  /** The segments' index files, written behind the data. */
  private readonly indexes: IndexWriter;
  /** The log's syncs. */
  readonly sync: LogSync;
  /** The log's quota (and the store's trims). */
  readonly trimmer: LogTrimmer;

  constructor(
    private readonly state: LogState,
    private readonly settings: WriterSettings,
  ) {
    this.sync = new LogSync(state, settings.scheduler, settings.syncIntervalMs, (error) => this.fail('sync', error), settings.onSync);
    this.trimmer = new LogTrimmer(state, this.sync, (error) => this.fail('manifest', error));
    this.indexes = new IndexWriter(state, settings.scheduler, settings.syncIntervalMs, (error) => this.fail('write', error));
  }

  /** The next append starts a new segment (a reopened log never appends to the files of before). */
  rollAtNextAppend(): void {
    this.rollNext = true;
  }

  /** Bytes taken and not yet written. */
  get backlogBytes(): number {
    return this.backlog;
  }

  /** Takes `event` (the caller checked the log takes appends): copies its record, queues its write. */
  take(event: SequencedEvent | GapRecord, time: number): void {
    const state = this.state;
    const size = recordBytes(event);
    let segment = state.active;
    if (segment === undefined || this.rollNext || (segment.takenBytes > 0 && segment.takenBytes + size > this.settings.segmentBytes)) {
      this.rollNext = false;
      // A segment that starts with a hole starts at the hole's first seq: readers find the hole by its segment.
      segment = this.roll(event.type === 'gap' ? event.fromSeq : event.seq);
    }
    const index = (segment.index ??= new SparseIndex());
    if (segment.takenBytes - index.lastOffset >= this.settings.indexIntervalBytes) index.add(event.seq, segment.takenBytes);
    let batch = this.queue[this.queue.length - 1];
    if (batch === undefined || batch.segment !== segment || batch.buffer.byteLength - batch.used < size) {
      batch = { segment, buffer: this.settings.pool.take(size), used: 0, lastSeq: 0 };
      this.queue.push(batch);
    }
    batch.used = writeRecord(batch.buffer, batch.used, event, time);
    batch.lastSeq = event.seq;
    segment.takenBytes += size;
    segment.lastSeq = event.seq;
    if (event.type === 'output') segment.payloadBytes += event.chunk.byteLength;
    state.memory.push(timed(event, time));
    state.lastSeq = state.heldSeq = event.seq;
    this.backlog += size;
    if (this.backlog >= this.settings.highWaterBytes && !this.pressure.value) this.pressure.next(true);
    if (event.type === 'exited' || event.type === 'closed') this.urgent = true; // exit and close reach the disk at once
    this.kick();
  }

  /** Writes everything taken, then syncs it. Resolves when done (also when the log failed); never rejects. */
  async flush(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
    await this.indexes.flush();
    if (this.state.failure === undefined) await this.sync.syncNow();
  }

  /** Flushes, then closes every file the writer holds. Never rejects. */
  async close(): Promise<void> {
    await this.flush();
    this.sync.cancel();
    for (const segment of this.state.segments) {
      const writer = segment.writer;
      segment.writer = undefined;
      await writer?.close().catch(() => undefined);
    }
  }

  private roll(baseSeq: number): Segment {
    const segment = Segment.fresh(this.state.dir, baseSeq);
    this.state.segments.push(segment);
    if (this.state.segments.length > 1) this.settings.onRoll();
    return segment;
  }

  private kick(): void {
    if (this.draining === undefined) this.draining = this.drain();
  }

  /**
   * The write loop: one `writev` of every buffer queued for the same segment (at most
   * {@link MAX_BUFFERS_PER_WRITE}), in order, until the queue is empty or the log fails; then the sync an
   * exit or close asked for. It clears `draining` in the same turn it finds the queue empty, so an append
   * never waits behind a loop that has already looked.
   *
   * All that is queued goes in one call because a host busy reading its executors runs this loop's
   * continuations between many socket reads: at one buffer per round trip the log fell behind a fast
   * process and paused its executor a dozen times per 100 MB (docs/performance.md).
   */
  private async drain(): Promise<void> {
    await Promise.resolve(); // the appends of this turn join the buffer first
    for (;;) {
      const batches = this.state.failure === undefined ? this.nextWrite() : [];
      const first = batches[0];
      if (first === undefined) {
        if (this.urgent && this.state.failure === undefined) {
          this.urgent = false;
          await this.sync.syncNow();
          continue;
        }
        this.draining = undefined;
        return;
      }
      let operation: LogWriteOperation = 'open';
      try {
        const file = await this.writerOf(first.segment);
        operation = 'write';
        await file.writev(batches.map((batch) => batch.buffer.subarray(0, batch.used)));
        for (const batch of batches) this.written(batch);
        this.indexes.written(first.segment, this.urgent);
      } catch (error: unknown) {
        this.fail(operation, error);
        continue;
      }
      if (this.state.diskBytes > this.settings.quotaBytes) {
        await this.indexes.settled(); // no index write runs on a segment the trim removes
        await this.trimmer.trimTo(this.settings.quotaBytes);
      }
    }
  }

  /** The batches the next write takes off the queue: the first and those after it of the same segment. */
  private nextWrite(): Batch[] {
    const first = this.queue[0];
    if (first === undefined) return [];
    let count = 1;
    while (count < MAX_BUFFERS_PER_WRITE && this.queue[count]?.segment === first.segment) count += 1;
    return this.queue.splice(0, count);
  }

  private async writerOf(segment: Segment): Promise<LogFile> {
    if (segment.writer !== undefined) return segment.writer;
    if (!this.madeDir) {
      await this.settings.ready;
      await this.state.fs.mkdir(this.state.dir);
      this.madeDir = true;
    }
    segment.writer = await this.state.fs.open(segment.path, 'append');
    return segment.writer;
  }

  /** The batch is in the file: readers now find its events there, and it leaves memory and the backlog. */
  private written(batch: Batch): void {
    const segment = batch.segment;
    segment.fileBytes += batch.used;
    segment.writtenSeq = batch.lastSeq;
    this.state.written(batch.lastSeq);
    this.backlog -= batch.used;
    this.settings.pool.release(batch.buffer);
    if (this.pressure.value && this.backlog <= this.settings.lowWaterBytes) this.pressure.next(false);
    this.sync.written(segment);
  }

  /** Fails the log once: readers get the error after what is held, the caller's socket is never left paused. */
  fail(operation: LogWriteOperation, error: unknown): void {
    const state = this.state;
    if (state.failure !== undefined) return;
    const failure = new OutputLogError(state.processId, errnoOf(error), operation);
    state.failure = failure;
    state.end ??= 'failed';
    this.sync.cancel();
    for (const batch of this.queue.splice(0)) this.settings.pool.release(batch.buffer);
    this.backlog = 0;
    if (this.pressure.value) this.pressure.next(false);
    if (operation === 'write') void this.cutPartialWrite(); // the write loop stopped: nothing else writes now
    this.settings.onFailure(failure);
  }

  /** A failed write may have left part of a buffer in the active segment: cut the file back (best effort). */
  private async cutPartialWrite(): Promise<void> {
    const segment = this.state.active;
    const writer = segment?.writer;
    if (segment === undefined || writer === undefined) return;
    await writer.truncate(segment.fileBytes).catch(() => undefined);
  }
}

/** The event as readers get it from memory: the appended object with its receipt time. */
function timed(event: SequencedEvent | GapRecord, time: number): StoredEvent {
  switch (event.type) {
    case 'gap':
      return { ...event, time };
    case 'output':
      return { type: 'output', seq: event.seq, stream: event.stream, chunk: event.chunk, time };
    case 'exited':
      return { type: 'exited', seq: event.seq, exitCode: event.exitCode, sandboxDenied: event.sandboxDenied, time };
    case 'closed':
      return { type: 'closed', seq: event.seq, time };
  }
}
