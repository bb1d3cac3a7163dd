/**
 * The writing end of a stdin FIFO (see `exec/stdin-fifo`): frames `<length>\n<bytes>` to the helper
 * process that copies them into the FIFO, each acknowledged with a newline on its stdout.
 */
import type { ExecProcess } from './exec-process';

/** Bytes sent but not yet acknowledged by the helper, at most (a single larger frame still goes alone). */
const WINDOW_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * The stdin of a command started with `stdin: 'fifo'` (`StartedProcess.feeder`): `write` sends bytes in
 * order, at most 1 MiB unacknowledged (a larger write waits for room; a single larger chunk goes alone),
 * and `end` sends end-of-file after them. Nothing is emitted and nothing rejects: `write` resolves
 * `false` once the helper is gone. The starter owns it and calls `dispose()` once done (it stops the
 * helper if no end-of-file was sent, and releases its history); nothing disposes it otherwise.
 */
export class FifoFeeder {
  private readonly unacked: number[] = [];
  private inFlight = 0;
  private done = false;
  private wake: (() => void) | undefined;
  private readonly watching;

  /** @internal Built by the stdin FIFO start (`exec/stdin-fifo`) around its helper process. */
  constructor(private readonly helper: ExecProcess) {
    this.watching = helper.events$.subscribe((event) => {
      if (event.type === 'output' && event.stream === 'stdout') {
        for (const byte of event.chunk) if (byte === NEWLINE) this.acknowledge();
      } else if (event.type === 'closed' || event.type === 'failed' || event.type === 'exited') {
        this.done = true;
        this.notify();
      }
    });
  }

  /** Sends `chunk`, waiting while the window is full. Resolves `false` once the helper is gone (stop sending). */
  async write(chunk: Uint8Array): Promise<boolean> {
    if (chunk.byteLength === 0) return !this.done;
    while (!this.done && this.inFlight > 0 && this.inFlight + chunk.byteLength > WINDOW_BYTES) {
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    if (this.done) return false;
    this.unacked.push(chunk.byteLength);
    this.inFlight += chunk.byteLength;
    const frame = Buffer.concat([Buffer.from(`${chunk.byteLength}\n`), chunk]);
    const status = await this.helper.write(frame).catch(() => 'failed' as const);
    return status === 'accepted';
  }

  /** Sends end-of-file (after everything written before); resolves once it was sent. Never rejects. */
  async end(): Promise<void> {
    if (!this.done) await this.helper.write('0\n').catch(() => undefined);
  }

  /**
   * Stops watching; terminates the helper if it is still running (no end-of-file came) and releases
   * it. Resolves once done; never rejects. Idempotent.
   */
  async dispose(): Promise<void> {
    this.done = true;
    this.notify();
    this.watching.unsubscribe();
    if (this.helper.state === 'running') await this.helper.terminate().catch(() => undefined);
    this.helper.release();
  }

  private acknowledge(): void {
    this.inFlight -= this.unacked.shift() ?? 0;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
