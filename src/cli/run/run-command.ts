/**
 * `exec-rx run`: runs one command on an executor (`main` sends `--host`, a host's environment, to
 * `remote/remote-run` instead), streams its stdout and stderr live, forwards stdin (with end-of-file, see
 * `exec/stdin-fifo`), and resolves with the command's exit code (128+n when it was signalled, as the
 * executor reports it).
 */
import { CannotStartError, messageOf, SpawnError } from '../../errors';
import type { RunOptions } from '../args';
import { reportConnection } from '../connection-reporter';
import type { CliIo } from '../io';
import { lineEnd } from '../terminal/stdin-relay';
import { launch } from './launch';
import type { ExecutorTarget, OpenTarget } from './run-target';
import { openTarget } from './run-target';
import { supervise } from './run-supervisor';
import { EXIT_FAILED, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND } from '../exit-codes';

/**
 * Runs the command on `executor` (`options.target`, never `--host`) and resolves with the exit status
 * to use. Never rejects: every failure is written to stderr as one `exec-rx: ...` line (no stack) and
 * mapped to 127/126/255. Tears down everything it opened (executor, host, stdin) before resolving.
 */
export async function runCommand(options: RunOptions, executor: ExecutorTarget, io: CliIo): Promise<number> {
  const say = (line: string): void => void io.stderr.write(`exec-rx: ${line}${lineEnd()}`);
  let target: OpenTarget;
  try {
    target = await openTarget(executor, options.verbose ? say : undefined);
  } catch (error: unknown) {
    say(messageOf(error));
    io.stdin.destroy();
    return EXIT_FAILED;
  }
  const reporting = reportConnection(target.environment.connectionState$, say, { verbose: options.verbose, ...(io.scheduler === undefined ? {} : { scheduler: io.scheduler }) });
  try {
    const launched = await launch(target, options, io, say);
    return await supervise(launched, target, io, say);
  } catch (error: unknown) {
    io.stdin.destroy();
    return reportStartFailure(error, options, say);
  } finally {
    reporting.unsubscribe();
    await target.close();
  }
}

function reportStartFailure(error: unknown, options: RunOptions, say: (line: string) => void): number {
  const program = options.argv[0] ?? '';
  if (error instanceof CannotStartError) {
    say(`cannot start ${program}: ${error.message}`);
    return error.exitCode;
  }
  if (error instanceof SpawnError) {
    say(`cannot start ${program}: ${error.rpcMessage}${options.cwd === undefined ? '' : ` (or its directory ${options.cwd} is missing)`}`);
    return error.kind === 'spawnPermissionDenied' ? EXIT_NOT_EXECUTABLE : EXIT_NOT_FOUND;
  }
  say(messageOf(error));
  return EXIT_FAILED;
}

