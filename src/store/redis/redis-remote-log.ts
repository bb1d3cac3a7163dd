/** Reading a process's log another writer writes (`RedisLogStore.openReader` for a log it does not write). */
import type Redis from 'ioredis';
import { OutputLogError } from '../../errors';
import type { LogRead } from '../log-events';
import { truncatedRange } from '../log-events';
import type { PacedLogReader } from '../log-store';
import type { ProcessKey } from '../process-meta';
import type { EnvironmentFollower } from './redis-follower';
import { endedBy } from './redis-follower';
import type { ProcessLogKeys } from './redis-log-keys';
import { countFor, fetchStored, ReadBuilder } from './redis-log-read';

/**
 * A process's log that this store does not write (another host writes it, or it was written before a
 * restart): read from Redis at the reader's pace, followed through the environment's loop. A log whose
 * owner's write failed ends as the owner's readers' does: its stream up to the first seq not written,
 * then the `writeFailed` marker of what the meta hash says was lost, then LOG_WRITE_FAILED; unless its
 * host stopped (`unknown`): then the reader waits at the first seq not written for the take-back.
 */
export class RemoteLogReader implements PacedLogReader {
  /** Read at the reader's own pace. */
  readonly pace = 'own';
  /** The last seq the log was seen to hold. */
  lastSeq = 0;
  private ended = false;
  /** The last seq the stream held when a read found its writer failed and its host stopped (the next wait is for more). */
  private heldAtFailure: number | undefined;

  constructor(
    private readonly key: ProcessKey,
    private readonly keys: ProcessLogKeys,
    private readonly redis: Redis,
    private readonly follower: EnvironmentFollower,
  ) {}

  /** The process's id. */
  get processId(): string {
    return this.key.processId;
  }

  /** The events after `afterSeq` the stream holds (see `PacedLogReader.read`). */
  async read(afterSeq: number, maxBytes: number): Promise<LogRead> {
    const read = new ReadBuilder(afterSeq, maxBytes);
    const count = countFor(maxBytes);
    const range = await fetchStored(this.redis, this.keys, this.processId, read.cursor, count);
    if (!range.exists && !this.follower.vanished(this.processId, true)) {
      // Missing for a moment (Redis restarted empty: the owner writes the log's keys back): nothing yet.
      return read.finish(read.cursor, false);
    }
    if (range.exists) this.follower.vanished(this.processId, false);
    if (!range.exists) {
      // Removed (or expired): what the reader had not read is gone.
      if (read.cursor < this.lastSeq) read.mark(truncatedRange('evicted', read.cursor + 1, this.lastSeq, 0));
      this.ended = true;
      return read.finish(read.cursor, true);
    }
    const failure = range.writeFailure;
    read.fromStored(range, failure === undefined ? Infinity : failure.fromSeq - 1);
    if (failure !== undefined && read.cursor >= failure.fromSeq - 1) {
      if (range.state === 'unknown') {
        // Its host stopped with the write failed: whoever takes the process back clears the failure and
        // writes on after what the stream holds; the reader waits for that (see `endedBy`).
        this.heldAtFailure = range.counters.lastSeq;
        return read.finish(read.cursor, false);
      }
      // The owner's write failed: what its stream holds after the failure is not served (as on the owner).
      read.writeFailed(failure.toSeq, failure.lostBytes, new OutputLogError(this.processId, failure.errno, 'write'));
      this.ended = true;
      return read.finish(read.cursor, true);
    }
    if (range.records.length < count) read.missing(range, range.counters.lastSeq);
    this.lastSeq = Math.max(this.lastSeq, range.counters.lastSeq);
    this.ended = endedBy({ ...range, closedSeq: range.closedSeq }, range.counters.lastSeq);
    return read.finish(range.counters.lastSeq, this.ended);
  }

  /**
   * Learns the last seq the log holds now, handing nothing out: what an answer of "the log as it is now"
   * (`…/log`, which reads up to {@link lastSeq}) starts from on a replica that never read it. Rejects with
   * the store's error.
   */
  async sync(): Promise<void> {
    const range = await fetchStored(this.redis, this.keys, this.processId, this.lastSeq, 1);
    if (range.exists) this.lastSeq = Math.max(this.lastSeq, range.counters.lastSeq);
  }

  /** Undefined: every read of a log this store does not write goes to Redis. */
  readNow(): LogRead | undefined {
    return undefined;
  }

  /**
   * Resolves once the log holds a seq after `afterSeq` or ends (the environment's follow loop); waiting
   * for a take-back (see `read`), once it holds more than it did then. Never rejects.
   */
  async waitFor(afterSeq: number): Promise<void> {
    if (this.heldAtFailure !== undefined) {
      const held = this.heldAtFailure;
      this.heldAtFailure = undefined;
      return this.follower.wait(this.processId, this.keys, Math.max(afterSeq, held));
    }
    if (this.lastSeq > afterSeq || this.ended) return;
    await this.follower.wait(this.processId, this.keys, afterSeq);
  }
}
