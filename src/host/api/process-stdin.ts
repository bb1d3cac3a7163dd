/**
 * A hosted process's stdin as the operator API offers it: writes applied once per `writeId` (the last
 * 4096 remembered), in arrival order, each answered once the executor accepted it; an idempotent end of
 * input (end-of-file through the FIFO wrapper for `pipeStdin`, Ctrl-D for a tty).
 */
import { createHash } from 'node:crypto';
import type { ExecProcess } from '../../exec/exec-process';
import type { FifoFeeder } from '../../exec/fifo-feeder';
import { ApiProblem } from './problem';

/** How many writeIds a process remembers. */
export const REMEMBERED_WRITES = 4096;

const CTRL_D = 0x04;

/** Where the bytes go: the FIFO helper of a `pipeStdin` process, or the pty of the (tty) process itself. */
export type StdinTarget = { readonly kind: 'fifo'; readonly feeder: FifoFeeder } | { readonly kind: 'pty' };

interface Remembered {
  readonly fingerprint: string;
  readonly outcome: Promise<void>;
}

/** One process's stdin. */
export class ProcessStdin {
  private readonly writes = new Map<string, Remembered>();
  private queue: Promise<unknown> = Promise.resolve();
  private ended: Promise<void> | undefined;
  private lastByte = 0x0a;

  /** @param process the command whose input this is (a write once it stopped running is refused) */
  constructor(
    private readonly process: ExecProcess,
    private readonly target: StdinTarget,
  ) {}

  /**
   * Writes `bytes` once for `writeId`: a repeat with the same bytes gets the first write's outcome; a
   * repeat with other bytes throws 422 `WRITE_ID_REUSED`; a write after the end, or once the process
   * no longer runs, throws 409 `STDIN_CLOSED`. Resolves once the executor accepted the bytes (after
   * every earlier write).
   */
  write(writeId: string, bytes: Uint8Array): Promise<void> {
    const fingerprint = createHash('sha256').update(bytes).digest('base64');
    const seen = this.writes.get(writeId);
    if (seen !== undefined) {
      if (seen.fingerprint !== fingerprint) return Promise.reject(new ApiProblem(422, 'WRITE_ID_REUSED', `writeId ${writeId} was used for other bytes`));
      return seen.outcome;
    }
    if (this.ended !== undefined) return Promise.reject(new ApiProblem(409, 'STDIN_CLOSED', 'the input of this process was ended'));
    const outcome = this.enqueue(() => this.send(bytes));
    this.writes.set(writeId, { fingerprint, outcome });
    if (this.writes.size > REMEMBERED_WRITES) {
      const oldest = this.writes.keys().next().value;
      if (oldest !== undefined) this.writes.delete(oldest);
    }
    outcome.catch(() => undefined);
    return outcome;
  }

  /** Ends the input after every earlier write (idempotent: a second end resolves with the first). */
  end(): Promise<void> {
    this.ended ??= this.enqueue(async () => {
      if (this.target.kind === 'fifo') {
        await this.target.feeder.end();
        return;
      }
      const eof = this.lastByte === 0x0a || this.lastByte === 0x0d ? [CTRL_D] : [CTRL_D, CTRL_D];
      if (this.process.state === 'running') await this.process.write(Uint8Array.from(eof));
    });
    return this.ended;
  }

  /** Stops the FIFO helper if it is still waiting (the process ended). */
  async dispose(): Promise<void> {
    if (this.target.kind === 'fifo') await this.target.feeder.dispose();
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async send(bytes: Uint8Array): Promise<void> {
    // The executor still accepts writes to a pty whose process has exited: they would go nowhere.
    if (this.process.state !== 'running') throw new ApiProblem(409, 'STDIN_CLOSED', 'the process no longer runs');
    if (bytes.byteLength > 0) this.lastByte = bytes[bytes.byteLength - 1] ?? this.lastByte;
    if (this.target.kind === 'fifo') {
      if (!(await this.target.feeder.write(bytes))) throw new ApiProblem(409, 'STDIN_CLOSED', 'the process no longer reads its input');
      return;
    }
    const status = await this.process.write(bytes);
    if (status !== 'accepted') throw new ApiProblem(409, 'STDIN_CLOSED', `the executor answered ${status}`);
  }
}
