/**
 * What a Redis log's owner took and has not yet written: the records in seq order (readers are served
 * them from memory), their output bytes (the backlog), the batches the flusher writes, and the backlog's
 * pressure: behind at the high mark, no longer at half of it, and never behind once the log ends.
 */
import { RingDeque } from '../../exec/ring-deque';
import type { LogRecord } from './redis-log-codec';
import { payloadOf } from './redis-log-codec';

/** Events one script call writes at most. */
export const BATCH_EVENTS = 64;
/** Output bytes one script call writes at most (a single larger chunk goes alone). */
export const BATCH_BYTES = 1024 * 1024;

/** A log's unwritten tail (see the module's doc). */
export class LogTail {
  private readonly records = new RingDeque<LogRecord>(16);
  /** Output bytes of the records. */
  bytes = 0;
  private behind = false;

  constructor(
    /** The backlog at which the log is behind. */ private readonly highBytes: number,
    /** Told of each change of pressure, with the backlog then. */ private readonly onPressure: (behind: boolean, backlogBytes: number) => void,
  ) {}

  /** Records held. */
  get length(): number {
    return this.records.length;
  }

  /** Adds a record. */
  push(record: LogRecord): void {
    this.records.push(record);
    this.bytes += payloadOf(record);
    this.checkPressure(false);
  }

  /** The next batch to write: up to {@link BATCH_EVENTS} records and {@link BATCH_BYTES} of output (at least one record). */
  batch(): LogRecord[] {
    const batch: LogRecord[] = [];
    let bytes = 0;
    for (let i = 0; i < this.records.length && batch.length < BATCH_EVENTS; i += 1) {
      const record = this.records.at(i);
      if (record === undefined || (batch.length > 0 && bytes + payloadOf(record) > BATCH_BYTES)) break;
      batch.push(record);
      bytes += payloadOf(record);
    }
    return batch;
  }

  /** The first `count` records were written. */
  written(count: number): void {
    for (let i = 0; i < count; i += 1) {
      const record = this.records.shift();
      if (record !== undefined) this.bytes -= payloadOf(record);
    }
    this.checkPressure(false);
  }

  /** Drops every record (they will not be written). */
  clear(): void {
    while (this.records.shift() !== undefined);
    this.bytes = 0;
  }

  /** The log takes no more appends: it is no longer behind. */
  ended(): void {
    this.checkPressure(true);
  }

  /** The first seq held (a hole from its first seq); Infinity when none. */
  get firstSeq(): number {
    const first = this.records.peek();
    return first === undefined ? Infinity : first.type === 'gap' ? first.fromSeq : first.seq;
  }

  /** The records, in seq order. */
  *[Symbol.iterator](): Generator<LogRecord> {
    for (let i = 0; i < this.records.length; i += 1) {
      const record = this.records.at(i);
      if (record !== undefined) yield record;
    }
  }

  private checkPressure(ended: boolean): void {
    const behind = !ended && (this.behind ? this.bytes > this.highBytes / 2 : this.bytes >= this.highBytes);
    if (behind === this.behind) return;
    this.behind = behind;
    this.onPressure(behind, this.bytes);
  }
}
