/**
 * One process's log as its owner writes it to Redis: events are taken into memory at once (readers see
 * them there), and a flusher writes them in batches of up to 64 per script call (`./redis-log-tail`), in
 * order, one call in flight per log. A call that fails for want of Redis (a dropped or paused connection)
 * is sent again once Redis answers (the script makes a resend a no-op); while Redis is unreachable the
 * backlog is held up to the store's `bufferBytes`, and past it the log fails with LOG_WRITE_FAILED
 * (`ENOBUFS`): readers get a `writeFailed` marker for what it could not keep, never a silent hole (the
 * store records it in the meta hash for readers elsewhere: {@link RedisLog.writeFailure}). A writer the
 * script finds stale is refused: the log takes no more appends. A call Redis refuses (a reply error) or answers
 * unusably (STORE_SCRIPT_FAILED) fails the log at once, that code its errno: sending it again would get the same.
 */
import { OutputLogError, StoreScriptError } from '../../errors';
import type { SequencedEvent } from '../../wire/process-event';
import type { LogRead } from '../log-events';
import { truncatedRange } from '../log-events';
import type { PacedLogReader } from '../log-store';
import type { ProcessKey } from '../process-meta';
import type { RedisLogContext, RedisLogEnd, RedisLogStart } from './redis-log-context';
import { deferred, isReplyError, replyCode } from './redis-log-context';
import type { LogRecord, WriteFailure } from './redis-log-codec';
import { encodeRecord } from './redis-log-codec';
import { LogTail } from './redis-log-tail';
import type { ProcessLogKeys } from './redis-log-keys';
import { countFor, fetchStored, ReadBuilder } from './redis-log-read';
import type { AppendResult } from './redis-log-scripts';

/** Reads a `read` retries when a flush moved its events from memory to the stream under it. */
const READ_ATTEMPTS = 3;

/** A process's log written by this store (see the module's doc). */
export class RedisLog implements PacedLogReader {
  /** Read at the reader's own pace. */
  readonly pace = 'own';
  /** The last seq appended (after a failure it goes on counting what could not be kept). */
  lastSeq: number;
  /** The last seq held: written, or in memory. */
  private heldSeq: number;
  /** The last seq the stream holds (confirmed by the script). */
  private confirmedSeq: number;
  private readonly pending: LogTail;
  private stored: RedisLogStart;
  private draining: Promise<void> | undefined;
  /** Why the log takes no more appends, once it does not. */
  end: RedisLogEnd | undefined;
  /** The write failure, once there was one. */
  failure: OutputLogError | undefined;
  /** After a failure: the last seq served from the stream (a call in flight may still land after it). */
  private writtenLimit = Infinity;
  private lostBytes = 0;
  private nextAppend: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined;

  constructor(
    /** The process. */ readonly key: ProcessKey,
    /** Its keys. */ readonly keys: ProcessLogKeys,
    /** The writer's epoch. */ readonly epoch: number,
    /** The writer's name (each entry is stamped with it and the epoch). */ private readonly writer: string,
    private readonly context: RedisLogContext,
    start: RedisLogStart = { lastSeq: 0, storedBytes: 0, storedEvents: 0, trimmedTo: 0 },
  ) {
    this.stored = start;
    this.pending = new LogTail(context.pressureBytes, (behind, backlogBytes) => context.pressure({ key, behind, backlogBytes }));
    this.lastSeq = start.lastSeq;
    this.heldSeq = start.lastSeq;
    this.confirmedSeq = start.lastSeq;
  }

  /** The process's id. */
  get processId(): string {
    return this.key.processId;
  }

  /** The first seq the log holds (what its quota dropped comes before it). */
  get firstSeq(): number {
    return this.stored.trimmedTo + 1;
  }

  /** Output bytes held: in the stream and in memory. */
  get storedBytes(): number {
    return this.stored.storedBytes + this.pending.bytes;
  }

  /** Events held: in the stream and in memory. */
  get storedEvents(): number {
    return this.stored.storedEvents + this.pending.length;
  }

  /** The last seq Redis confirmed it holds. */
  get confirmed(): number {
    return this.confirmedSeq;
  }

  /** Output bytes taken and not yet written. */
  get backlogBytes(): number {
    return this.pending.bytes;
  }

  /**
   * Takes one event (see the module's doc): one at or below the last seq is ignored, a seq that skips
   * some records a hole first; after a failure it is counted as lost. Never throws.
   */
  append(event: SequencedEvent): void {
    if (this.failure !== undefined) {
      if (!(event.seq > this.lastSeq)) return;
      this.lose(event.seq, event.type === 'output' ? event.chunk.byteLength : 0);
      // The process goes on: its exit and its close still reach the metadata.
      if (event.type !== 'output') this.context.lifecycle(this, event);
      return;
    }
    if (this.end !== undefined || !(Number.isSafeInteger(event.seq) && event.seq > this.lastSeq)) return;
    const time = this.now();
    if (this.lastSeq > 0 && event.seq > this.lastSeq + 1) this.take({ type: 'gap', seq: event.seq - 1, fromSeq: this.lastSeq + 1, droppedBytes: 0, time });
    this.take({ ...event, time });
    if (event.type !== 'output') this.context.lifecycle(this, event);
    if (event.type === 'closed') this.finish('closed');
  }

  /** Records that the seqs after the last one up to `nextSeq - 1` will never come (readers get an `evicted` marker). */
  appendGap(nextSeq: number, droppedBytes: number): void {
    if (this.end !== undefined || this.failure !== undefined || !Number.isSafeInteger(nextSeq) || nextSeq <= this.lastSeq + 1) return;
    this.take({ type: 'gap', seq: nextSeq - 1, fromSeq: this.lastSeq + 1, droppedBytes: Math.max(0, Math.floor(droppedBytes)), time: this.now() });
  }

  /** {@link read} at once when memory holds what the cursor wants (or there is nothing to read); undefined when Redis must be read. */
  readNow(afterSeq: number, maxBytes: number): LogRead | undefined {
    const read = new ReadBuilder(afterSeq, maxBytes);
    if (this.end !== 'removed' && read.cursor < this.heldSeq && this.pending.firstSeq > read.cursor + 1) return undefined;
    return this.finishRead(read);
  }

  /** The events after `afterSeq`: from the stream, then from memory (see `PacedLogReader.read`). */
  async read(afterSeq: number, maxBytes: number): Promise<LogRead> {
    for (let attempt = 1; ; attempt += 1) {
      const now = this.readNow(afterSeq, maxBytes);
      if (now !== undefined) return now;
      const read = new ReadBuilder(afterSeq, maxBytes);
      const count = countFor(maxBytes);
      const range = await fetchStored(this.context.redis, this.keys, this.processId, read.cursor, count);
      read.fromStored(range, this.writtenLimit);
      // What the log's counters (read with the stream, in one step) say it holds and it does not: Redis lost it.
      if (range.records.length < count) read.missing(range, Math.min(range.counters.lastSeq, this.writtenLimit));
      if (!read.full) read.fromMemory(this.pending);
      // Nothing given and more held: a flush moved the events from memory to the stream under this read.
      if (read.count > 0 || read.cursor >= this.heldSeq || attempt >= READ_ATTEMPTS) return this.finishRead(read);
    }
  }

  /** Resolves once the log holds a seq after `afterSeq`, or takes no more appends. Never rejects. */
  async waitFor(afterSeq: number): Promise<void> {
    while (this.heldSeq <= afterSeq && this.end === undefined) {
      this.nextAppend ??= deferred();
      await this.nextAppend.promise;
    }
  }

  /** Resolves once what was taken is written (or the log failed, was removed, refused). Never rejects. */
  async flush(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
  }

  /** Takes no more appends; what was taken is still written. Resolves once it is. */
  seal(): Promise<void> {
    this.finish('sealed');
    return this.flush();
  }

  /** The log's keys were deleted: nothing more is written; readers get an `evicted` marker. */
  removed(): void {
    this.dropPending();
    this.end = 'removed';
    this.wake();
    this.release();
  }

  /** Fails the log (LOG_WRITE_FAILED with `errno`): what is not written is lost; it takes no more appends. */
  fail(errno: string): void {
    if (this.failure !== undefined || this.end === 'removed') return;
    this.failure = new OutputLogError(this.processId, errno, 'write');
    this.writtenLimit = this.confirmedSeq;
    this.lostBytes += this.pending.bytes;
    this.dropPending();
    this.heldSeq = this.confirmedSeq;
    this.end = 'failed';
    this.wake();
    this.release();
    this.context.failed(this, this.failure);
  }

  /** Fails the log when Redis is unreachable and its backlog is past the store's buffer. */
  checkBuffer(): void {
    if (this.pending.bytes > this.context.bufferBytes && !this.context.reachable()) this.fail('ENOBUFS');
  }

  private take(record: LogRecord): void {
    this.pending.push(record);
    this.lastSeq = record.seq;
    this.heldSeq = record.seq;
    this.wake();
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
    this.checkBuffer();
  }

  private lose(seq: number, bytes: number): void {
    this.lastSeq = seq;
    this.lostBytes += bytes;
    this.context.lost(this);
  }

  /** What could not be written, once the log failed (what its readers' `writeFailed` marker says, and the meta hash records). */
  get writeFailure(): WriteFailure | undefined {
    return this.failure === undefined ? undefined : { errno: this.failure.errno, fromSeq: this.writtenLimit + 1, toSeq: this.lastSeq, lostBytes: this.lostBytes };
  }

  private get writing(): boolean {
    return this.failure === undefined && this.end !== 'removed';
  }

  /** Writes what is pending, a batch per script call, until none is (see the module's doc). */
  private async drain(): Promise<void> {
    await Promise.resolve(); // the appends of this turn go in the same batch
    while (this.pending.length > 0 && this.writing) {
      if (!this.context.reachable()) {
        await this.context.whenReachable();
        if (!this.context.reachable()) return; // the store stopped
        continue;
      }
      const batch = this.pending.batch();
      let result: AppendResult;
      try {
        const keys = [this.keys.stream, this.keys.meta, this.keys.owner, this.keys.trims] as const;
        const args = batch.flatMap(encodeRecord);
        const writer = { epoch: this.epoch, name: this.writer };
        result = await this.context.send(() => this.context.scripts.append(keys, writer, this.context.quotaBytes, batch.length, args));
      } catch (error: unknown) {
        if (!this.writing) return;
        if (isReplyError(error)) return this.fail(replyCode(error));
        if (error instanceof StoreScriptError) return this.fail(error.code); // calling again would get the same
        await this.context.afterError(error);
        continue;
      }
      this.context.answered();
      if (!this.writing) return;
      if (!result.accepted) return this.refuse(result.currentEpoch);
      this.confirm(batch, result);
    }
  }

  private confirm(batch: readonly LogRecord[], result: AppendResult): void {
    this.pending.written(batch.length);
    this.confirmedSeq = Math.max(this.confirmedSeq, batch[batch.length - 1]?.seq ?? 0);
    this.stored = { lastSeq: result.lastSeq, storedBytes: result.storedBytes, storedEvents: result.storedEvents, trimmedTo: result.trimmedTo };
  }

  /** The script found the writer stale: nothing of the batch was written; the log takes no more appends. */
  private refuse(currentEpoch: number): void {
    this.dropPending();
    this.heldSeq = this.confirmedSeq;
    this.lastSeq = this.confirmedSeq;
    this.finish('sealed');
    this.context.refused(this, currentEpoch);
  }

  private dropPending(): void {
    this.pending.clear();
  }

  private finish(end: RedisLogEnd): void {
    this.end ??= end;
    this.wake();
    this.release();
  }

  /** Ends the backpressure of a log that takes no more appends. */
  private release(): void {
    this.pending.ended();
  }

  private finishRead(read: ReadBuilder): LogRead {
    if (this.end === 'removed') {
      if (read.cursor < this.heldSeq) read.mark(truncatedRange('evicted', read.cursor + 1, this.heldSeq, 0));
      return read.finish(this.heldSeq, true);
    }
    if (!read.full) read.fromMemory(this.pending);
    if (this.failure !== undefined && read.cursor >= this.heldSeq) {
      read.writeFailed(this.lastSeq, this.lostBytes, this.failure);
      return read.finish(read.cursor, true);
    }
    return read.finish(this.heldSeq, this.end !== undefined);
  }

  private now(): number {
    return Math.max(0, Math.floor(this.context.scheduler.now()));
  }

  private wake(): void {
    const waiting = this.nextAppend;
    this.nextAppend = undefined;
    waiting?.resolve();
  }
}
