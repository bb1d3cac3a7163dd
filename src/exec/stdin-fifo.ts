/**
 * Stdin with end-of-file for a command on a 0.171.0 executor, which cannot close a process's stdin.
 *
 * The command reads a FIFO on the executor, fed by a helper process that has `pipeStdin`:
 * 1. a setup process checks that the program exists (exit 127/126, like a shell) and `mkfifo -m 600`s a
 *    fresh path in the executor's temp dir;
 * 2. the helper opens the FIFO for writing and the command's wrapper opens it as its stdin; each removes
 *    the path once open (so no file is left behind once both run);
 * 3. stdin travels to the helper as frames `<length>\n<bytes>`; the helper copies each with `head -c`
 *    (which never reads past the count) and acknowledges it with a newline on its stdout, which bounds
 *    the bytes in flight; the frame `0\n` ends the helper, closing the FIFO's write end: the command
 *    sees end-of-file after every byte, in order (the end marker travels in band, so nothing is cut off
 *    the way terminating the helper could).
 */
import { randomUUID } from 'node:crypto';
import { firstValueFrom } from 'rxjs';
import { CannotStartError, HelperFailedError } from '../errors';
import type { ExecBackend, StartParams } from './exec-backend';
import type { ExecProcess } from './exec-process';

/**
 * A `sh -c` script that exits like a shell would for the program `$1`: 127 when it is not found (on
 * `PATH`, or as a path), 126 when it is not executable; it falls through otherwise.
 */
export const PROGRAM_CHECK = [
  'case "$1" in',
  '*/*) if [ ! -e "$1" ]; then exit 127; elif [ -d "$1" ] || [ ! -x "$1" ]; then exit 126; fi ;;',
  '*) command -v -- "$1" >/dev/null 2>&1 || exit 127 ;;',
  'esac',
].join('\n');
const PREPARE = `${PROGRAM_CHECK}\nexec mkfifo -m 600 "$0"`;
const FEEDER = 'exec 3>"$0" && rm -f "$0" || exit 1\nwhile IFS= read -r n && [ "$n" -gt 0 ]; do head -c "$n" >&3 || exit 1; echo; done';
const WRAPPER = 'exec 0<"$0" && rm -f "$0" || exit 1\nexec "$@"';

/** What {@link startWithStdinFifo} resolves with. */
export interface FifoStarted {
  /** The command. */
  readonly process: ExecProcess;
  /** Its stdin. */
  readonly feeder: FifoFeeder;
}

/**
 * Starts `params.argv` reading a FIFO under `tempDir` (a native path on the executor). Rejects with
 * {@link CannotStartError} when the program is missing or not executable, with HelperFailedError
 * (`helper: 'stdinFifo'`) when the FIFO could not be made, with the start's typed error (SpawnError for
 * a missing cwd ...) otherwise; nothing is left running or on disk then.
 */
export async function startWithStdinFifo(backend: ExecBackend, params: StartParams, tempDir: string): Promise<FifoStarted> {
  const fifo = `${tempDir.replace(/\/+$/, '')}/exec-rx-stdin-${randomUUID()}`;
  // The helpers get ids of their own; a processId asked for is the command's.
  const { argv, processId, ...base } = params;
  const program = argv[0] ?? '';
  const setup = await backend.start({ ...base, argv: ['sh', '-c', PREPARE, fifo, program] }, UNLISTED);
  const status = await firstValueFrom(setup.process.exitCode$);
  setup.process.release();
  if (status === 126 || status === 127) throw new CannotStartError(program, status);
  if (status !== 0) throw new HelperFailedError('stdinFifo', `could not create a stdin FIFO in ${tempDir} on the executor (status ${status})`);
  const helper = await backend.start({ ...base, argv: ['sh', '-c', FEEDER, fifo], pipeStdin: true }, UNLISTED).catch(async (error: unknown) => {
    await removeFifo(backend, base, fifo);
    throw error;
  });
  const feeder = new FifoFeeder(helper.process);
  try {
    // Listed as the command itself: a process list shows what the user ran, not the wrapper.
    const command = await backend.start({ ...base, ...(processId === undefined ? {} : { processId }), argv: ['sh', '-c', WRAPPER, fifo, ...argv] }, { listedArgv: argv });
    return { process: command.process, feeder };
  } catch (error: unknown) {
    await feeder.dispose();
    await removeFifo(backend, base, fifo);
    throw error;
  }
}

/** Best effort: removes a FIFO nobody opened. */
async function removeFifo(backend: ExecBackend, base: Omit<StartParams, 'argv'>, fifo: string): Promise<void> {
  try {
    const { process } = await backend.start({ ...base, argv: ['rm', '-f', fifo] }, UNLISTED);
    await firstValueFrom(process.exitCode$);
    process.release();
  } catch {
    // the executor is gone or refuses: nothing more to do
  }
}

/** The wrapper's helper processes stay off the environment's process list. */
const UNLISTED = { unlisted: true } as const;

/** Bytes sent but not yet acknowledged by the helper, at most (a single larger frame still goes alone). */
const WINDOW_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/** Writes frames to the helper, at most {@link WINDOW_BYTES} unacknowledged. Call `dispose()` when done. */
export class FifoFeeder {
  private readonly unacked: number[] = [];
  private inFlight = 0;
  private done = false;
  private wake: (() => void) | undefined;
  private readonly watching;

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

  /** Sends end-of-file (after everything written before). */
  async end(): Promise<void> {
    if (!this.done) await this.helper.write('0\n').catch(() => undefined);
  }

  /** Stops watching; terminates the helper if it is still running (no end-of-file came). */
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
