/**
 * A pty of a given size on a 0.171.0 executor, which opens every pty at 24 rows by 80 columns and has
 * no `process/resize` (docs/protocol.md#methods): the command runs under
 * `sh -c 'stty rows R cols C; exec "$@"'`, listed under its own argv. The program is checked first (by a
 * short non-tty process, as the stdin FIFO wrapper does), so one that cannot start is refused before
 * anything runs, as an unsized start's is, instead of exiting 127 inside the wrapper.
 */
import { firstValueFrom } from 'rxjs';
import type { ExecBackend, StartedProcess, StartParams } from './exec-backend';
import { CannotStartError, PROGRAM_CHECK } from './stdin-fifo';

/** A terminal size in character cells. */
export interface TerminalSize {
  readonly rows: number;
  readonly cols: number;
}

const SIZED = 'stty rows "$1" cols "$2" 2>/dev/null; shift 2; exec "$@"';

/**
 * Starts `params.argv` in a pty of `size`. Rejects with {@link CannotStartError} when the program is
 * missing or not executable, with the start's typed error (SpawnError for a missing cwd ...) otherwise;
 * nothing is left running then. The process is listed under `params.argv`.
 */
export async function startSizedTty(backend: ExecBackend, params: StartParams, size: TerminalSize): Promise<StartedProcess> {
  const { argv, processId, ...base } = params;
  const program = argv[0] ?? '';
  const check = await backend.start({ ...base, tty: false, argv: ['sh', '-c', PROGRAM_CHECK, 'exec-rx-check', program] }, { unlisted: true });
  const status = await firstValueFrom(check.process.exitCode$);
  check.process.release();
  if (status === 126 || status === 127) throw new CannotStartError(program, status);
  const sized = ['sh', '-c', SIZED, 'exec-rx-tty', String(size.rows), String(size.cols), ...argv];
  return backend.start({ ...base, ...(processId === undefined ? {} : { processId }), tty: true, argv: sized }, { listedArgv: argv });
}
