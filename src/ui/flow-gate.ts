/**
 * Flow control by xterm's write callbacks (xterm.js's flow-control guide, as ttyd does): bytes handed to
 * the terminal and not yet written are counted. Above {@link HIGH_WATER} the page drops the process part
 * of its stream (remembering the last seq it queued); below {@link LOW_WATER} it resumes after that seq.
 * So nothing is buffered without bound, and nothing is lost or doubled.
 */

/** Above this many unwritten bytes the process part of the stream is dropped (512 KiB). */
export const HIGH_WATER = 512 * 1024;
/** Below this many it resumes by seq (128 KiB). */
export const LOW_WATER = 128 * 1024;

/** The watermark counter; `drop` and `resume` are called once per crossing. */
export class FlowGate {
  private pending = 0;
  private dropped = false;

  constructor(
    private readonly drop: () => void,
    private readonly resume: () => void,
    private readonly high = HIGH_WATER,
    private readonly low = LOW_WATER,
  ) {}

  /** Bytes not yet written by the terminal. */
  get unwritten(): number {
    return this.pending;
  }

  /** Whether the process part of the stream is dropped now. */
  get isDropped(): boolean {
    return this.dropped;
  }

  /** `bytes` were handed to the terminal. */
  queued(bytes: number): void {
    this.pending += bytes;
    if (!this.dropped && this.pending > this.high) {
      this.dropped = true;
      this.drop();
    }
  }

  /** The terminal wrote `bytes` (its write callback). */
  written(bytes: number): void {
    this.pending -= bytes;
    if (this.dropped && this.pending < this.low) {
      this.dropped = false;
      this.resume();
    }
  }

  /** Forgets a dropped state (a new selection starts its own stream). */
  reset(): void {
    this.dropped = false;
  }
}
