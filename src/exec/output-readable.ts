import { Readable } from 'node:stream';
import type { Observable, Subscription } from 'rxjs';
import type { FlowHold } from '../rpc/connection-flow';
import type { ProcessViewOptions } from './output-views';

/** What {@link ProcessReadableOptions.highWaterMark} defaults to: 256 KiB. */
export const DEFAULT_READABLE_HIGH_WATER_MARK = 256 * 1024;

/** Options of `ExecProcess.toReadable`. */
export interface ProcessReadableOptions extends ProcessViewOptions {
  /**
   * The bytes the Readable buffers for its consumer before it holds the connection paused (Node's
   * `highWaterMark`): it reads again once the consumer has taken the buffer below it. Output already on
   * its way when the connection pauses is still buffered, so the buffer may exceed it by that much.
   * @default 262144 (256 KiB)
   */
  readonly highWaterMark?: number;
}

/**
 * A byte-mode Readable of `bytes$` that pulls: subscribed at once (so nothing before the first read is
 * missed), it buffers what arrives and, while the buffer is at `highWaterMark` or over, holds the
 * connection paused with `hold()`; Node's next `_read` (the consumer took it below the mark) releases
 * the hold. `bytes$` ending ends the stream; its error destroys it with that error; destroying it
 * unsubscribes and releases the hold.
 */
export function pullReadable(bytes$: Observable<Uint8Array>, hold: () => FlowHold, highWaterMark: number): Readable {
  return new PullReadable(bytes$, hold, highWaterMark);
}

class PullReadable extends Readable {
  private held: FlowHold | undefined;
  /** Unset only while subscribing (a replay may end or fail the stream before `subscribe` returns). */
  private subscription: Subscription | undefined;

  constructor(
    bytes$: Observable<Uint8Array>,
    private readonly hold: () => FlowHold,
    highWaterMark: number,
  ) {
    super({ highWaterMark });
    this.subscription = bytes$.subscribe({
      // The hot path: one push and one comparison per chunk; a hold only when crossing the mark.
      next: (chunk) => {
        if (!this.push(chunk) && this.held === undefined && !this.destroyed) this.held = this.hold();
      },
      error: (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
      complete: () => {
        this.release();
        this.push(null);
      },
    });
    if (this.destroyed) this.subscription.unsubscribe();
  }

  override _read(): void {
    this.release();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.subscription?.unsubscribe();
    this.release();
    callback(error);
  }

  private release(): void {
    const held = this.held;
    this.held = undefined;
    held?.release();
  }
}
