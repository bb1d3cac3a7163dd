/**
 * Stdin with end-of-file for a command on a 0.171.0 executor, which cannot close a process's stdin.
 *
 * The command reads a FIFO on the executor, fed by a helper process that has `pipeStdin`:
 * 1. a setup process checks that the program exists (exit 127/126, like a shell) and `mkfifo -m 600`s a
 *    fresh path in the executor's temp dir;
 * 2. the helper opens the FIFO for writing and the command's wrapper opens it as its stdin; each removes
 *    the path once open (so no file is left behind once both run);
 * 3. stdin travels to the helper as frames `<length>\n<bytes>` (written by `FifoFeeder`, in
 *    exec/fifo-feeder); the helper copies each with `head -c` (which never reads past the count) and
 *    acknowledges it with a newline on its stdout, which bounds the bytes in flight; the frame `0\n` ends
 *    the helper, closing the FIFO's write end: the command sees end-of-file after every byte, in order
 *    (the end marker travels in band, so nothing is cut off the way terminating the helper could).
 *
 * `ExecBackend.start` with `stdin: 'fifo'` comes here; every process goes out through its raw send.
 */
import { randomUUID } from 'node:crypto';
import { firstValueFrom } from 'rxjs';
import { CannotStartError, HelperFailedError } from '../errors';
import { FifoFeeder } from './fifo-feeder';
import type { SendParams, SendStart, StartedProcess, StartOptions } from './start-params';

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

/**
 * Starts `params.argv` reading a FIFO under `tempDir` (a native path on the executor), each process
 * with `send` (the backend's raw `process/start`); `options` are the command's (its helpers are
 * unlisted). Resolves with the command as `send` resolved it, and its `feeder`. Rejects with
 * {@link CannotStartError} when the program is missing or not executable, with HelperFailedError
 * (`helper: 'stdinFifo'`) when the FIFO could not be made, with the start's typed error (SpawnError for
 * a missing cwd ...) otherwise; nothing is left running or on disk then.
 */
export async function startWithStdinFifo(send: SendStart, params: SendParams, tempDir: string, options: StartOptions = {}): Promise<StartedProcess> {
  const fifo = `${tempDir.replace(/\/+$/, '')}/exec-rx-stdin-${randomUUID()}`;
  // The helpers get ids of their own; a processId asked for is the command's.
  const { argv, processId, ...base } = params;
  const program = argv[0] ?? '';
  const setup = await send({ ...base, argv: ['sh', '-c', PREPARE, fifo, program] }, UNLISTED);
  const status = await firstValueFrom(setup.process.exitCode$);
  setup.process.release();
  if (status === 126 || status === 127) throw new CannotStartError(program, status);
  if (status !== 0) throw new HelperFailedError('stdinFifo', `could not create a stdin FIFO in ${tempDir} on the executor (status ${status})`);
  const helper = await send({ ...base, argv: ['sh', '-c', FEEDER, fifo], pipeStdin: true }, UNLISTED).catch(async (error: unknown) => {
    await removeFifo(send, base, fifo);
    throw error;
  });
  const feeder = new FifoFeeder(helper.process);
  try {
    // Listed as the command itself: a process list shows what the user ran, not the wrapper.
    const wrapped = { ...base, ...(processId === undefined ? {} : { processId }), argv: ['sh', '-c', WRAPPER, fifo, ...argv] };
    const command = await send(wrapped, { ...options, listedArgv: options.listedArgv ?? argv });
    return { ...command, feeder };
  } catch (error: unknown) {
    await feeder.dispose();
    await removeFifo(send, base, fifo);
    throw error;
  }
}

/** Best effort: removes a FIFO nobody opened. */
async function removeFifo(send: SendStart, base: Omit<SendParams, 'argv'>, fifo: string): Promise<void> {
  try {
    const { process } = await send({ ...base, argv: ['rm', '-f', fifo] }, UNLISTED);
    await firstValueFrom(process.exitCode$);
    process.release();
  } catch {
    // the executor is gone or refuses: nothing more to do
  }
}

/** The wrapper's helper processes stay off the environment's process list. */
const UNLISTED = { unlisted: true } as const;
