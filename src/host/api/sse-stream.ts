/**
 * One Server-Sent Events stream of the operator API and what an event pump writes to: {@link EventSink},
 * and {@link SseStream}, one response with a bounded send buffer (a write past the bound ends it; the
 * client resumes by seq), its comment ping, and its last frames (the come-back event of a host that
 * stops, the comment of a revoked token).
 */
import type { ServerResponse } from 'node:http';
import type { StreamEndReason, StreamObserver } from '../metrics/host-metrics';
import type { EventFraming, WireFrame } from './event-framing';
import { SSE_FRAMING } from './event-framing';

/** An observer that hears nothing (a stream's and the hub's, `./sse`, when none is given). */
export const UNOBSERVED: StreamObserver = { opened: () => undefined, sent: () => undefined, ended: () => undefined };

/**
 * What a process's event pump (`./process-event-stream`, `./log-event-stream`) writes to: a whole
 * {@link SseStream}, or one `SseChannel` (`./sse-channel`) of a stream that carries more (the multiplexed overview).
 */
export interface EventSink {
  /** How frames are made for this sink (SSE, or the binary stream its client asked for). */
  readonly framing: EventFraming;
  /** Bytes waiting to be sent on the connection. */
  readonly buffered: number;
  /** A replay pauses at this many bytes waiting and goes on after the next drain. */
  readonly highWater: number;
  /** The sink ended: nothing more is written to it. */
  readonly isEnded: boolean;
  /** Writes one whole frame; `false` when the sink ended (or ends now: past the connection's bound). */
  write(frame: WireFrame): boolean;
  /** Ends the sink (idempotent); `reason` is what the metrics count when it ends the connection. */
  end(reason?: StreamEndReason): void;
  /** Runs `listener` once, when the sink ends for any reason (at once if it already has). */
  onEnd(listener: () => void): void;
  /** Runs `listener` once, at the connection's next `drain`; returns the function that cancels it. */
  onDrain(listener: () => void): () => void;
}

/** One open event stream, SSE or binary. `write` refuses (and ends the stream) past the buffer bound. */
export class SseStream implements EventSink {
  private ended = false;
  private readonly endListeners: (() => void)[] = [];

  constructor(
    readonly res: ServerResponse,
    /** The name of the token that opened it. */
    readonly tokenId: string,
    private readonly bufferBytes: number,
    /** Hears the bytes written and why the stream ended. @default none */
    private readonly observer: StreamObserver = UNOBSERVED,
    /** How its frames are made. @default SSE */
    readonly framing: EventFraming = SSE_FRAMING,
  ) {
    res.once('close', () => this.finish('client'));
  }

  /** Bytes waiting in this response's buffer. */
  get buffered(): number {
    return this.res.writableLength;
  }

  /** The stream ended (by us, the bound, or the client going away). */
  get isEnded(): boolean {
    return this.ended;
  }

  /** Half the bound: a replay pauses here and waits for `drain` before it goes on. */
  get highWater(): number {
    return this.bufferBytes >> 1;
  }

  /**
   * Writes one whole frame; `false` (and the stream ends) when it would take the buffer past the bound,
   * or the stream already ended. A frame is never cut: what the client got ends at an event boundary.
   */
  write(frame: WireFrame): boolean {
    if (this.ended) return false;
    if (this.res.writableLength + frame.byteLength > this.bufferBytes) {
      this.end('overflow');
      return false;
    }
    this.send(frame);
    return true;
  }

  /** The comment ping (skipped when the buffer is already over half the bound). */
  ping(): void {
    if (!this.ended && this.res.writableLength < this.highWater) this.send(this.framing.ping());
  }

  /**
   * Ends the stream with the come-back event (`retry:` and `event: restart`, data `{"retryMs": …}`): the
   * host stops, the client reconnects after `retryMs`. Written whatever the buffer holds (it is small);
   * nothing follows it. Idempotent, like {@link end}.
   */
  comeBack(retryMs: number): void {
    if (this.ended) return;
    this.send(this.framing.comeBack(retryMs));
    this.end('restart');
  }

  /**
   * Ends the stream because its token was revoked (a reload): a last comment line says so, nothing
   * follows it. Idempotent, like {@link end}.
   */
  revoked(): void {
    if (this.ended) return;
    this.send(this.framing.revoked());
    this.end('revoked');
  }

  /** Ends the response (idempotent); `reason` is what the metrics count it as. */
  end(reason: StreamEndReason = 'completed'): void {
    if (this.ended) return;
    this.res.end();
    this.finish(reason);
  }

  /** Runs `listener` once, when the stream ends for any reason (at once if it already has). */
  onEnd(listener: () => void): void {
    if (this.ended) listener();
    else this.endListeners.push(listener);
  }

  /** Runs `listener` once at the response's next `drain`; returns the function that cancels it. */
  onDrain(listener: () => void): () => void {
    this.res.once('drain', listener);
    return () => void this.res.off('drain', listener);
  }

  /** Writes `frame`; a split one in its two parts, in one tick (Node sends them in one `writev`). */
  private send(frame: WireFrame): void {
    if (frame instanceof Uint8Array) this.res.write(frame);
    else {
      this.res.write(frame.head);
      this.res.write(frame.body);
    }
    this.observer.sent(frame.byteLength);
  }

  private finish(reason: StreamEndReason): void {
    if (this.ended && this.endListeners.length === 0) return;
    if (!this.ended) this.observer.ended(reason);
    this.ended = true;
    const listeners = this.endListeners.splice(0);
    for (const listener of listeners) listener();
  }
}
