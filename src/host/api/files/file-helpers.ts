/**
 * The long file operations a POSIX executor does as a helper process rather than as one `fs/*` request:
 * copying (`cp -a`), moving into place (`mv -f`) and removing a tree (`rm -rf`). A request holds the
 * executor's one request line for as long as it runs (docs/protocol.md#one-request-at-a-time), past the library's 30 s call
 * timeout for a big tree; a process holds it only for its `process/start`, and the host then waits for its
 * exit notification, off the line. `mv` also gives what 0.171.0's `fs/*` lacks: a rename (atomic within one
 * filesystem). A Windows executor has no `sh`, `cp` or `mv` of that kind: the routes use `fs/copy` and
 * `fs/remove` there instead (see `./file-transfers`).
 *
 * Helpers run unlisted (not in the environment's process list), in `/`, with a fixed `PATH` and `LC_ALL=C`
 * (so their messages are the ones `./file-errors` knows), and every path after `--`.
 */
import type { SchedulerLike } from 'rxjs';
import type { Environment } from '../../../environment/environment';
import { ApiProblem } from '../problem';
import type { FileCalls } from './file-calls';
import { knownFailure } from './file-errors';
import type { FilePath } from './file-path';

/** How long the host waits for a helper's exit before it terminates it and answers 504: 15 minutes. */
export const HELPER_BOUND_MS = 15 * 60_000;

/** The environment a helper runs with. */
const HELPER_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' } as const;

/** What a helper ended with. */
export interface HelperOutcome {
  readonly exitCode: number;
  readonly stderr: string;
}

/** Whether the environment's executor runs on Windows (from its info; unknown info counts as POSIX). */
export async function isWindows(environment: Environment): Promise<boolean> {
  const info = await environment.info().catch(() => undefined);
  return info?.platformOs === 'windows';
}

/**
 * Runs `argv` as a helper on the environment of `calls` (its `process/start` in the request's lane) and
 * resolves with its exit code and stderr once it exited. Past `boundMs` it is terminated and the call
 * rejects with ApiProblem 504 `REQUEST_TIMEOUT`; a start the executor refuses rejects with the file
 * routes' problem of `path`.
 */
export async function runHelper(calls: FileCalls, path: FilePath, argv: readonly string[], scheduler: SchedulerLike, boundMs = HELPER_BOUND_MS): Promise<HelperOutcome> {
  const backend = calls.environment.getExecBackend();
  const started = await calls.queued(path, () => backend.start({ argv: [...argv], cwd: '/', env: HELPER_ENV }, { unlisted: true }));
  const { process } = started;
  const bound = new AbortController();
  const late = new ApiProblem(504, 'REQUEST_TIMEOUT', `${argv[0] ?? 'the helper'} ran past ${boundMs} ms on the executor; it was terminated`);
  const timer = scheduler.schedule(() => bound.abort(late), boundMs);
  try {
    const output = await process.collect({ signal: bound.signal });
    return { exitCode: output.exitCode, stderr: output.stderr };
  } catch (error: unknown) {
    if (bound.signal.aborted) await process.terminate().catch(() => false);
    throw error;
  } finally {
    timer.unsubscribe();
    process.release();
  }
}

/**
 * Runs a helper and throws unless it exits 0: a failure its stderr names (`./file-errors`) as that
 * problem, any other as 502 `FILE_OPERATION_FAILED` with the first line of its stderr.
 */
export async function runHelperOrThrow(calls: FileCalls, path: FilePath, argv: readonly string[], scheduler: SchedulerLike): Promise<void> {
  const outcome = await runHelper(calls, path, argv, scheduler);
  if (outcome.exitCode === 0) return;
  const said = outcome.stderr.trim().split('\n')[0] ?? '';
  const detail = `${argv[0] ?? 'a helper'} exited ${outcome.exitCode} on the executor: ${said.slice(0, 300)}`;
  throw knownFailure(said, path.native) ?? new ApiProblem(502, 'FILE_OPERATION_FAILED', detail);
}
