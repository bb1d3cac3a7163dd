/**
 * The writing end of a stdin FIFO (see `exec/stdin-fifo`): frames `<length>\n<bytes>` to the helper
 * process that copies them into the FIFO, each acknowledged with a newline on its stdout.
 */
import type { ExecProcess } from './exec-process';
import { writeIdsFor } from './process-requests';

/** Bytes sent but not yet acknowledged by the helper, at most (a single larger frame still goes alone). */
const WINDOW_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * The stdin of a command started with `stdin: 'fifo'` (`StartedProcess.feeder`): `write` sends bytes in
 * order, at most 1 MiB unacknowledged (a larger write waits for room; a single larger chunk goes alone),
 * and `end` sends end-of-file after them. Nothing is emitted and nothing rejects: `write` resolves
 * `false` once the helper is gone. The starter owns it and calls `dispose()` once done (it stops the
 * helper if no end-of-file was sent, and releases its history); nothing disposes it otherwise.
 *
 * A host that persists its stdin across a restart reserves each frame's writeIds ({@link writeIdsOf})
 * before it sends them, and hands the helper it took back to a new feeder: a frame sent again with
 * its reserved ids is dropped by the executor when it had it (see `ExecProcess.write`).
 */
export class FifoFeeder {
  private readonly unacked: number[] = [];
  private inFlight = 0;
  private done = false;
  private wake: (() => void) | undefined;
  private readonly watching;

  /**
   * @internal Built by the stdin FIFO start (`exec/stdin-fifo`) around its helper process, or by a host
   * around the helper it took back after a restart (then only the helper's events after those it holds
   * count: the acknowledgements of before were for frames of before).
   */
  constructor(private readonly helper: ExecProcess) {
    this.watching = helper.eventsAfter$(helper.lastPublishedSeq).subscribe((event) => {
      if (event.type === 'output' && event.stream === 'stdout') {
        for (const byte of event.chunk) if (byte === NEWLINE) this.acknowledge();
      } else if (event.type === 'closed' || event.type === 'failed' || event.type === 'exited') {
        this.done = true;
        this.notify();
      }
    });
    // Ended before these events (a helper taken back after it exited): nothing more to send.
    if (helper.state !== 'running') this.done = true;
  }

  /** The helper's process id on the executor (what a host persists to take it back after a restart). */
  get processId(): string {
    return this.helper.processId;
  }

  /** The writeId the helper's next `process/write` uses, unless one was reserved. */
  get nextWriteId(): number {
    return this.helper.nextWriteId;
  }

  /**
   * How many writeIds {@link write} of `chunk` (or {@link end}, for `'end'`) uses: a host that persists
   * its writes reserves that many from its counter, persists them, then passes the first to the send.
   */
  writeIdsOf(chunk: Uint8Array | 'end'): number {
    return chunk === 'end' ? 1 : chunk.byteLength === 0 ? 0 : writeIdsFor(frameLength(chunk.byteLength));
  }

  /**
   * Sends `chunk`, waiting while the window is full. Resolves `false` once the helper is gone (stop
   * sending). `firstWriteId`: the first of the frame's reserved ids ({@link writeIdsOf}). `again`: the frame was
   * reserved (and maybe sent) before a restart: it does not count in the window (the executor may drop
   * it, so no acknowledgement would come).
   */
  async write(chunk: Uint8Array, firstWriteId?: number, again = false): Promise<boolean> {
    if (chunk.byteLength === 0) return !this.done;
    while (!again && !this.done && this.inFlight > 0 && this.inFlight + chunk.byteLength > WINDOW_BYTES) {
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    if (this.done) return false;
    if (!again) {
      this.unacked.push(chunk.byteLength);
      this.inFlight += chunk.byteLength;
    }
    const frame = Buffer.concat([Buffer.from(`${chunk.byteLength}\n`), chunk]);
    return this.helper.write(frame, firstWriteId).then(
      () => true,
      () => false,
    );
  }

  /**
   * Sends end-of-file (after everything written before), as `writeId` when reserved; resolves once it
   * was sent. Never rejects.
   */
  async end(writeId?: number): Promise<void> {
    if (!this.done) await this.helper.write('0\n', writeId).catch(() => undefined);
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
    // An acknowledgement of a frame sent again after a restart has no entry (0).
    this.inFlight = Math.max(0, this.inFlight - (this.unacked.shift() ?? 0));
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** The bytes of the frame that carries `byteLength` bytes: `<length>\n<bytes>`. */
const frameLength = (byteLength: number): number => String(byteLength).length + 1 + byteLength;
