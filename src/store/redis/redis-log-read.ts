/**
 * The read side of a process's log in Redis: one atomic look (MULTI: the meta hash, `XRANGE` from the
 * cursor with a COUNT, the quota's trim before the cursor) turned into a {@link LogRead}, followed by what
 * the owner still holds in memory (taken, not yet written). Every range the log cannot give is one
 * `truncated` marker: what its quota dropped (`quota`, with the bytes the script counted), a hole the
 * executor left or seqs the stream never held (`evicted`), what the owner could not write
 * (`writeFailed`), a removed log (`evicted`).
 */
import type Redis from 'ioredis';
import type { OutputLogError } from '../../errors';
import { OutputLogReadError } from '../../errors';
import { redisErrnoOf } from '../errno';
import type { LogEvent, LogRead, LogTruncatedEvent } from '../log-events';
import { truncatedRange } from '../log-events';
import type { LogCounters, LogRecord, WriteFailure } from './redis-log-codec';
import { decodeCounters, decodeEntry, decodeWriteFailure, payloadOf } from './redis-log-codec';
import type { ProcessLogKeys } from './redis-log-keys';

/** What one look at a process's keys found after a cursor. */
export interface StoredRange {
  /** The meta hash exists (the store holds the process). */
  readonly exists: boolean;
  /** Its state and `released` flag, as the meta hash says. */
  readonly state: string | undefined;
  /** Whether it was released. */
  readonly released: boolean;
  /** The seq of its `closed` event, once it was taken (0: not yet). */
  readonly closedSeq: number;
  /** The log's counters. */
  readonly counters: LogCounters;
  /** The records after the cursor, in seq order (at most the COUNT asked). */
  readonly records: readonly LogRecord[];
  /** Output bytes the quota dropped up to the cursor's seq, or the newest dropped seq before it remembered (0: none). */
  readonly droppedBefore: number;
  /** What the owner could not write, once its log failed. */
  readonly writeFailure: WriteFailure | undefined;
}

/** Entries one read asks for: about `maxBytes` of 256-byte chunks, within 16..1024. */
export const countFor = (maxBytes: number): number => Math.min(1024, Math.max(16, Math.ceil(maxBytes / 256)));

/** Looks at `keys` after `afterSeq` (see {@link StoredRange}). Rejects with OutputLogReadError when Redis refuses. */
export async function fetchStored(redis: Redis, keys: ProcessLogKeys, processId: string, afterSeq: number, count: number): Promise<StoredRange> {
  let replies: [error: Error | null, result: unknown][] | null;
  try {
    replies = await redis
      .multi()
      .hgetall(keys.meta)
      .xrangeBuffer(keys.stream, `${afterSeq + 1}-0`, '+', 'COUNT', count)
      .zrevrangebyscore(keys.trims, afterSeq, '-inf', 'LIMIT', 0, 1)
      .exec();
  } catch (error: unknown) {
    throw new OutputLogReadError(processId, redisErrnoOf(error));
  }
  const [hashReply, entriesReply, trimReply] = replies ?? [];
  for (const reply of [hashReply, entriesReply, trimReply]) if (reply === undefined || reply[0] !== null) throw new OutputLogReadError(processId, redisErrnoOf(reply?.[0]));
  const hash = asHash(hashReply?.[1]);
  const records: LogRecord[] = [];
  for (const entry of asEntries(entriesReply?.[1])) {
    const record = decodeEntry(entry[0], entry[1]);
    if (record !== undefined) records.push(record);
  }
  const trim = Array.isArray(trimReply?.[1]) ? String(trimReply[1][0] ?? '') : '';
  return {
    exists: hash.startedAt !== undefined,
    state: hash.state,
    released: hash.released === '1',
    closedSeq: Number(hash.closedSeq ?? 0) || 0,
    counters: decodeCounters(hash),
    records,
    droppedBefore: Number(trim.split(':')[1] ?? 0) || 0,
    writeFailure: decodeWriteFailure(hash),
  };
}

/** Bounds a read: its value, or undefined when it took too long. */
export type ReadBound = <T>(read: Promise<T>) => Promise<T | undefined>;

/** `read`'s value within `bound`; rejects with OutputLogReadError: Redis refused, or did not answer in time (ETIMEDOUT). */
async function bounded<T>(read: Promise<T>, bound: ReadBound, processId: string): Promise<T> {
  const answered = await bound(read.then((value) => ({ value }), (error: unknown) => ({ error })));
  if (answered === undefined) throw new OutputLogReadError(processId, 'ETIMEDOUT');
  if ('error' in answered) throw new OutputLogReadError(processId, redisErrnoOf(answered.error));
  return answered.value;
}

/** A process's meta hash and its stream's length: what a take-back starts from. Rejects as {@link bounded} does. */
export function readTakenBack(redis: Redis, keys: ProcessLogKeys, processId: string, bound: ReadBound): Promise<[Record<string, string>, number]> {
  return bounded(Promise.all([redis.hgetall(keys.meta), redis.xlen(keys.stream)]), bound, processId);
}

/** Whether a process's log is there, and its environment's owner epoch now (0: none). Rejects as {@link bounded} does. */
export async function readHeld(redis: Redis, keys: ProcessLogKeys, processId: string, bound: ReadBound): Promise<{ readonly exists: boolean; readonly ownerEpoch: number }> {
  const [exists, epoch] = await bounded(Promise.all([redis.exists(keys.meta), redis.hget(keys.owner, 'epoch')]), bound, processId);
  return { exists: exists > 0, ownerEpoch: Number(epoch) || 0 };
}

/** A `HGETALL` reply as a record of strings. */
export function asHash(reply: unknown): Record<string, string> {
  const hash: Record<string, string> = {};
  if (typeof reply !== 'object' || reply === null) return hash;
  for (const [name, value] of Object.entries(reply)) if (typeof value === 'string') hash[name] = value;
  return hash;
}

function asEntries(reply: unknown): [Buffer, Buffer[]][] {
  if (!Array.isArray(reply)) return [];
  const entries: [Buffer, Buffer[]][] = [];
  for (const entry of reply) {
    if (!Array.isArray(entry)) continue;
    const [id, fields] = entry as unknown[];
    if (Buffer.isBuffer(id) && Array.isArray(fields)) entries.push([id, fields.filter((field): field is Buffer => Buffer.isBuffer(field))]);
  }
  return entries;
}

/** One read being put together: from a cursor, within a byte budget (see the module's doc). */
export class ReadBuilder {
  private readonly events: LogEvent[] = [];
  private memoryFrom: number | undefined;
  private budget: number;
  /** The last seq given or covered. */
  cursor: number;

  constructor(afterSeq: number, maxBytes: number) {
    this.cursor = Math.max(0, afterSeq);
    this.budget = maxBytes;
  }

  /** The budget is spent (and something was given). */
  get full(): boolean {
    return this.events.length > 0 && this.budget <= 0;
  }

  /** Events and markers so far. */
  get count(): number {
    return this.events.length;
  }

  /** Gives a marker. */
  mark(marker: LogTruncatedEvent): void {
    this.events.push(marker);
    this.cursor = Math.max(this.cursor, marker.toSeq);
  }

  /**
   * Gives what `range` holds, up to `limit` (a seq: the owner's stream entries after a write failure are
   * not served): first the quota's marker when the cursor is in what it dropped, then the records, with an
   * `evicted` marker for seqs the stream does not hold between them.
   */
  fromStored(range: StoredRange, limit = Infinity): void {
    const { trimmedTo, droppedBytes } = range.counters;
    if (this.cursor < trimmedTo) this.mark(truncatedRange('quota', this.cursor + 1, trimmedTo, droppedBytes - range.droppedBefore));
    for (const record of range.records) {
      if (this.full || record.seq > limit) return;
      const first = record.type === 'gap' ? record.fromSeq : record.seq;
      if (record.seq <= this.cursor) continue;
      if (first > this.cursor + 1) this.mark(truncatedRange('evicted', this.cursor + 1, first - 1, 0));
      this.give(record);
    }
  }

  /**
   * After {@link fromStored} gave all the stream holds after the cursor (fewer entries than a read asks):
   * the seqs up to `heldTo` it does not hold are gone (Redis lost them: restarted empty, or from an AOF a
   * second behind): one `evicted` marker for them, then the process's `closed`, at the seq its metadata
   * kept, when it went with them (a reader gets an end, never a wait for what will not come).
   */
  missing(range: StoredRange, heldTo: number): void {
    if (this.full || this.cursor >= heldTo) return;
    const closedSeq = range.closedSeq > this.cursor && range.closedSeq <= heldTo ? range.closedSeq : 0;
    const lastLost = closedSeq > 0 ? closedSeq - 1 : heldTo;
    if (lastLost > this.cursor) this.mark(truncatedRange('evicted', this.cursor + 1, lastLost, 0));
    if (closedSeq > 0) this.give({ type: 'closed', seq: closedSeq, time: 0 });
  }

  /** Gives the owner's records in memory from the cursor on (the log's own objects: see `LogRead.memoryFrom`); false when they do not reach it. */
  fromMemory(records: Iterable<LogRecord>): boolean {
    for (const record of records) {
      if (this.full) return true;
      if (record.seq <= this.cursor) continue;
      const first = record.type === 'gap' ? record.fromSeq : record.seq;
      if (first > this.cursor + 1) return false;
      this.memoryFrom ??= this.events.length;
      this.give(record);
    }
    return true;
  }

  /** Gives a failure: the `failed` event, last. */
  fail(event: LogEvent & { readonly type: 'failed' }): void {
    this.events.push(event);
  }

  /** Gives a failed write's end: a `writeFailed` marker up to `toSeq` (when the cursor is before it) of `lostBytes`, then `failed` with `error`. */
  writeFailed(toSeq: number, lostBytes: number, error: OutputLogError): void {
    if (toSeq > this.cursor) this.mark(truncatedRange('writeFailed', this.cursor + 1, toSeq, lostBytes));
    this.fail({ type: 'failed', error });
  }

  /** The read's answer, `heldSeq` being the last seq the log holds or covers and `ended` whether nothing more will come once there. */
  finish(heldSeq: number, ended: boolean): LogRead {
    const caughtUp = this.cursor >= heldSeq;
    return { events: this.events, lastSeq: this.cursor, caughtUp, ended: caughtUp && ended, memoryFrom: this.memoryFrom ?? this.events.length };
  }

  private give(record: LogRecord): void {
    if (record.type === 'gap') {
      const fromSeq = Math.max(record.fromSeq, this.cursor + 1);
      this.mark(truncatedRange('evicted', fromSeq, record.seq, fromSeq === record.fromSeq ? record.droppedBytes : 0));
      return;
    }
    this.events.push(record);
    this.cursor = record.seq;
    this.budget -= payloadOf(record);
  }
}
