import { ProtocolError } from '../errors';
import type { HttpBodyDeltaNotification } from '../wire/http';

/** Bounds on the body deltas of a streamed response kept out of order while a missing seq is awaited. */
export interface BodyOrderLimits {
  /** Deltas that may wait. @default 256 */
  readonly maxPendingDeltas: number;
  /** Body bytes that may wait. @default 16777216 */
  readonly maxPendingBytes: number;
}

/** The default {@link BodyOrderLimits}: 256 deltas, 16 MiB. */
export const DEFAULT_BODY_ORDER_LIMITS: BodyOrderLimits = { maxPendingDeltas: 256, maxPendingBytes: 16 * 1024 * 1024 };

/**
 * Puts one streamed body's deltas in seq order (1, 2, 3, …; docs/protocol.md#http-requests): deltas go in
 * in any order and come out contiguous, each once; duplicates are dropped. A delta that would make more
 * than the limits wait throws a ProtocolError (the delta filling the next gap is always accepted). Owned
 * by one stream; not reentrant.
 */
export class BodyOrder {
  private next = 1;
  private readonly pending = new Map<number, HttpBodyDeltaNotification>();
  private pendingBytes = 0;

  constructor(
    readonly requestId: string,
    private readonly limits: BodyOrderLimits = DEFAULT_BODY_ORDER_LIMITS,
  ) {}

  /** Takes a delta; returns the deltas that are now in order (often none, or just this one). */
  accept(delta: HttpBodyDeltaNotification): HttpBodyDeltaNotification[] {
    if (delta.seq < this.next || this.pending.has(delta.seq)) return [];
    if (delta.seq === this.next && this.pending.size === 0) {
      this.next += 1;
      return [delta];
    }
    if (delta.seq !== this.next) this.checkRoom(delta);
    this.pending.set(delta.seq, delta);
    this.pendingBytes += delta.deltaBase64.byteLength;
    const ready: HttpBodyDeltaNotification[] = [];
    for (let d = this.pending.get(this.next); d !== undefined; d = this.pending.get(this.next)) {
      ready.push(d);
      this.pending.delete(this.next);
      this.pendingBytes -= d.deltaBase64.byteLength;
      this.next += 1;
    }
    return ready;
  }

  private checkRoom(delta: HttpBodyDeltaNotification): void {
    if (this.pending.size + 1 > this.limits.maxPendingDeltas) {
      throw new ProtocolError(`http/request ${this.requestId} body reorder buffer exceeds ${this.limits.maxPendingDeltas} entries`);
    }
    if (this.pendingBytes + delta.deltaBase64.byteLength > this.limits.maxPendingBytes) {
      throw new ProtocolError(`http/request ${this.requestId} body reorder buffer exceeds ${this.limits.maxPendingBytes} bytes`);
    }
  }
}
