import { ReorderOverflowError } from '../errors';
import type { ExitedEvent, OutputEvent, SequencedEvent } from '../wire/process-event';

/** Bounds on what a {@link ReorderBuffer} holds while it waits for a missing seq (docs/protocol.md#our-reorder-buffer). */
export interface ReorderLimits {
  /**
   * Events that may wait for a lower seq. The event that fills the next gap is always accepted.
   * @default 256
   */
  readonly maxPendingEvents: number;
  /**
   * Output bytes that may wait for a lower seq; also the largest single event accepted at all.
   * @default 1048576
   */
  readonly maxPendingBytes: number;
}

/** codex's limits: 256 pending events and 1 MiB pending bytes. */
export const DEFAULT_REORDER_LIMITS: ReorderLimits = { maxPendingEvents: 256, maxPendingBytes: 1_048_576 };

/** A hole in the seq run: every seq in `from..to` (inclusive) is missing while later ones wait. */
export interface SeqRange {
  readonly from: number;
  readonly to: number;
}

/** Shared by every buffer with nothing waiting (never written: the first event to wait makes a Map). */
const NOTHING_PENDING = new Map<number, SequencedEvent>();

/** Shared empty result: no allocation when nothing becomes publishable. */
export const NOTHING_PUBLISHED: readonly SequencedEvent[] = Object.freeze([]);

/**
 * The per-process reorder buffer (docs/protocol.md#sequence-numbers,
 * docs/protocol.md#our-reorder-buffer): events from notifications and recovery reads go in in any order;
 * they come out with strictly increasing, contiguous seqs, each exactly once.
 *
 * - Duplicates (`seq <= lastPublishedSeq`, or a seq already pending) are dropped.
 * - Limits as codex: the event that fills the next gap is always accepted; any other event that would
 *   make more than `maxPendingEvents` or `maxPendingBytes` wait throws {@link ReorderOverflowError}
 *   (`… exceeds 256 entries` / `… exceeds 1048576 bytes`); a single event over `maxPendingBytes`
 *   throws whatever its seq.
 * - Once `closed` is published, or after {@link ReorderBuffer.fail}, every push is ignored. An event
 *   numbered above a known `closed` is dropped (closed always has the highest seq).
 * - Every error it throws first fails the buffer (pending events are discarded); the owner then fails
 *   the process.
 *
 * Not thread-safe and not reentrant; owned by one ExecProcess, which tears it down by dropping it.
 */
export class ReorderBuffer {
  private last = 0;
  /** Events waiting for a lower seq; the shared empty map until the first one waits. */
  private pending: Map<number, SequencedEvent> = NOTHING_PENDING;
  private bytes = 0;
  private exitPublished = false;
  private pendingExitSeq = 0;
  private closedIsPublished = false;
  private closedSeq = 0;
  private isFailed = false;
  /** closed published or failed: nothing more goes in. */
  private stopped = false;

  constructor(
    readonly processId: string,
    readonly limits: ReorderLimits = DEFAULT_REORDER_LIMITS,
    /** Seqs up to here count as published already (an adopted process: what its history holds). */
    startAfterSeq = 0,
  ) {
    this.last = startAfterSeq;
  }

  /** The highest seq handed out so far (0 before the first event): recovery reads start after it. */
  get lastPublishedSeq(): number {
    return this.last;
  }

  /** Events waiting for a lower seq. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Output bytes waiting for a lower seq. */
  get pendingBytes(): number {
    return this.bytes;
  }

  /** An `exited` event was published or is pending. */
  get exitSeen(): boolean {
    return this.exitPublished || this.pendingExitSeq !== 0;
  }

  /** The `closed` event was published: the process's event run is complete. */
  get closedPublished(): boolean {
    return this.closedIsPublished;
  }

  /** The buffer was failed (by an overflow, a recovery error or {@link ReorderBuffer.fail}). */
  get failed(): boolean {
    return this.isFailed;
  }

  /**
   * Offers one event. Returns the events that became publishable, in seq order: usually `[event]`,
   * nothing for a duplicate or an early event, or a whole run when `event` fills a gap. The returned
   * array belongs to the caller (the shared empty result is frozen).
   *
   * @throws ReorderOverflowError when the event cannot wait within the limits (the buffer is failed).
   */
  push(event: SequencedEvent): readonly SequencedEvent[] {
    const seq = event.seq;
    if (this.stopped || seq <= this.last) return NOTHING_PUBLISHED;
    const bytes = event.type === 'output' ? event.chunk.byteLength : 0;
    if (seq === this.last + 1) {
      // In order: one small array, no Map traffic unless something was waiting.
      this.checkSingleEvent(bytes);
      this.publish(event);
      return this.pending.size === 0 ? [event] : this.drain([event]);
    }
    return this.hold(event, seq, bytes);
  }

  /**
   * Whether {@link push} would take `event` without overflowing: it is the next seq (or already
   * published), or it can wait within the limits. Changes nothing.
   */
  fits(event: SequencedEvent): boolean {
    if (this.stopped || event.seq <= this.last + 1 || this.pending.has(event.seq)) return true;
    const bytes = event.type === 'output' ? event.chunk.byteLength : 0;
    return this.pending.size < this.limits.maxPendingEvents && this.bytes + bytes <= this.limits.maxPendingBytes;
  }

  /**
   * The common case of {@link push} (docs/performance.md): when `event` is the next seq, nothing waits and it fits the limits,
   * publishes it and returns `true` (the caller publishes `event` alone). Otherwise changes nothing and
   * returns `false`: the caller uses {@link push}.
   */
  acceptNext(event: OutputEvent): boolean {
    if (this.stopped || event.seq !== this.last + 1 || this.pending.size !== 0 || event.chunk.byteLength > this.limits.maxPendingBytes) return false;
    this.last = event.seq;
    return true;
  }

  /**
   * The first hole when events are waiting (`from` = lastPublishedSeq + 1, `to` = lowest pending seq − 1),
   * for a gap-filling `process/read`; `undefined` when nothing waits. O(pending) (at most 256), on demand.
   */
  missingRange(): SeqRange | undefined {
    if (this.pending.size === 0) return undefined;
    let lowest = Number.POSITIVE_INFINITY;
    for (const seq of this.pending.keys()) if (seq < lowest) lowest = seq;
    return { from: this.last + 1, to: lowest - 1 };
  }

  /** The pending event at `seq`, if any (used by recovery merging). */
  pendingAt(seq: number): SequencedEvent | undefined {
    return this.pending.get(seq);
  }

  /** The seqs of the pending events, in no particular order (used by recovery merging). */
  pendingSeqs(): IterableIterator<number> {
    return this.pending.keys();
  }

  /** Marks a pending `exited` event as sandbox-denied (a recovery read knows better; codex ORs the flags). */
  markPendingExitSandboxDenied(): void {
    const exit = this.pending.get(this.pendingExitSeq);
    if (exit === undefined || exit.type !== 'exited' || exit.sandboxDenied) return;
    const denied: ExitedEvent = { ...exit, sandboxDenied: true };
    this.pending.set(exit.seq, denied);
  }

  /**
   * Counts every seq up to `seq` as published without publishing it (the executor no longer has them:
   * the caller marks them truncated). Pending events at or below it are discarded. No-op when `seq` is
   * not above the last published one, or once stopped.
   */
  skipTo(seq: number): void {
    if (this.stopped || seq <= this.last) return;
    this.last = seq;
    for (const [pendingSeq, event] of [...this.pending]) {
      if (pendingSeq > seq) continue;
      this.pending.delete(pendingSeq);
      if (event.type === 'output') this.bytes -= event.chunk.byteLength;
      if (event.type === 'exited' && this.pendingExitSeq === pendingSeq) this.pendingExitSeq = 0;
    }
  }

  /** Makes the buffer terminal: pending events are discarded and every later push is ignored. Idempotent. */
  fail(): void {
    if (this.stopped) return;
    this.isFailed = true;
    this.stop();
  }

  private hold(event: SequencedEvent, seq: number, bytes: number): readonly SequencedEvent[] {
    if (this.pending.has(seq) || (this.closedSeq !== 0 && seq > this.closedSeq)) return NOTHING_PUBLISHED;
    const { maxPendingEvents, maxPendingBytes } = this.limits;
    if (this.pending.size >= maxPendingEvents) throw this.overflow(`exceeds ${maxPendingEvents} entries`);
    this.checkSingleEvent(bytes);
    if (this.bytes + bytes > maxPendingBytes) throw this.overflow(`exceeds ${maxPendingBytes} bytes`);
    if (this.pending === NOTHING_PENDING) this.pending = new Map();
    this.pending.set(seq, event);
    this.bytes += bytes;
    if (event.type === 'exited' && this.pendingExitSeq === 0) this.pendingExitSeq = seq;
    if (event.type === 'closed' && (this.closedSeq === 0 || seq < this.closedSeq)) this.closedSeq = seq;
    return NOTHING_PUBLISHED;
  }

  private drain(out: SequencedEvent[]): SequencedEvent[] {
    let next = this.pending.get(this.last + 1);
    while (next !== undefined && !this.stopped) {
      this.pending.delete(next.seq);
      if (next.type === 'output') this.bytes -= next.chunk.byteLength;
      this.publish(next);
      out.push(next);
      next = this.pending.get(this.last + 1);
    }
    return out;
  }

  private publish(event: SequencedEvent): void {
    this.last = event.seq;
    if (event.type === 'exited') {
      this.exitPublished = true;
      if (this.pendingExitSeq === event.seq) this.pendingExitSeq = 0;
    } else if (event.type === 'closed') {
      this.closedIsPublished = true;
      this.closedSeq = event.seq;
      this.stop();
    }
  }

  private checkSingleEvent(bytes: number): void {
    const max = this.limits.maxPendingBytes;
    if (bytes > max) {
      this.fail();
      throw oversizedEventError(this.processId, bytes, max);
    }
  }

  private overflow(detail: string): ReorderOverflowError {
    this.fail();
    return new ReorderOverflowError(this.processId, detail);
  }

  private stop(): void {
    this.stopped = true;
    this.pending = NOTHING_PENDING;
    this.bytes = 0;
    this.pendingExitSeq = 0;
  }
}

/** The error for one event larger than the whole pending-bytes budget (codex: "process event exceeds …"). */
export function oversizedEventError(processId: string, bytes: number, maxBytes: number): ReorderOverflowError {
  return new ReorderOverflowError(processId, `cannot take an event of ${bytes} bytes: it exceeds ${maxBytes} bytes`);
}
