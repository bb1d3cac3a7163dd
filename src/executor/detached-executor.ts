/**
 * A codex executor of its own, in direct mode: spawned detached from this process (its own session and
 * process group, stdin /dev/null, stdout and stderr appended to a file), so it outlives us; found again
 * later by its pid, and ended by it. Facts this relies on (codex 0.171.0, measured; see
 * `./spawn-executor`): SIGTERM makes the executor kill the process group of every process it started and
 * exit; SIGKILL orphans them. Linux only for the liveness check (`/proc/PID/cmdline`).
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler, firstValueFrom, interval, filter, take, timeout, map, of, catchError } from 'rxjs';
import { ExecutorStartError } from '../errors';
import { resolveCodexBinary } from './codex-binary';
import type { ExecutorExit } from './executor-process';
import { inheritedEnv, launchPlan } from './launch-plan';
import type { DirectSpawnOptions } from './spawn-options';

/** Where a detached executor keeps its files. */
export interface DetachedExecutorFiles {
  /** Its CODEX_HOME (must exist). */
  readonly codexHome: string;
  /** The file its stdout and stderr are appended to (made 0600 if missing). */
  readonly logPath: string;
}

/** A detached executor we started. */
export interface DetachedExecutor {
  readonly pid: number;
  /** Resolves when it exits while this process still runs. Never rejects. */
  readonly exited: Promise<ExecutorExit>;
}

/**
 * Spawns `codex exec-server --remote … --remote-transport direct` detached (see the module's doc), without
 * `--exit-on-stdin-close`. Resolves once it has spawned (registration follows asynchronously); rejects
 * with ExecutorStartError if the binary cannot be spawned. This process does not wait for it to exit.
 */
export async function spawnDetachedExecutor(options: DirectSpawnOptions, files: DetachedExecutorFiles): Promise<DetachedExecutor> {
  const binary = options.binary ?? resolveCodexBinary();
  const { args, env } = await launchPlan({ ...options, exitOnStdinClose: false }, files.codexHome);
  const log = openSync(files.logPath, 'a', 0o600);
  try {
    const child = spawn(binary, [...args, ...(options.extraArgs ?? [])], {
      env: { ...inheritedEnv(), ...options.env, ...env, CODEX_HOME: files.codexHome },
      stdio: ['ignore', log, log],
      detached: true,
    });
    const exited = new Promise<ExecutorExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve).once('error', (error) => reject(new ExecutorStartError(`failed to start codex exec-server (${binary}): ${error.message}`, { cause: error })));
    });
    child.unref();
    if (child.pid === undefined) throw new ExecutorStartError('executor has no pid');
    return { pid: child.pid, exited };
  } finally {
    closeSync(log);
  }
}

/**
 * Whether `pid` is a live codex executor (`exec-server` in its command line) and, when its environment
 * can be read, one whose CODEX_HOME is `codexHome`. A zombie, a reused pid or a missing one is not.
 */
export function isDetachedExecutor(pid: number, codexHome: string): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  let cmdline: string[];
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return false;
  }
  if (!cmdline.includes('exec-server')) return false;
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`CODEX_HOME=${codexHome}`);
  } catch {
    return true; // its environment is not ours to read: the command line has to do
  }
}

/** How {@link endDetachedExecutor} went. */
export type DetachedEnd = 'terminated' | 'killed' | 'not running' | 'still running';

/**
 * Ends a detached executor: SIGTERM (it kills its processes' groups), then SIGKILL if `alive()` still
 * holds after `graceMs`, then waits up to `graceMs` again. Resolves how it went; never rejects. `alive`
 * is polled every 50 ms on `scheduler` (the process is not our child: there is no exit event).
 */
export async function endDetachedExecutor(pid: number, alive: () => boolean, graceMs: number, scheduler: SchedulerLike = asyncScheduler): Promise<DetachedEnd> {
  if (!alive()) return 'not running';
  const gone = (): Promise<boolean> =>
    firstValueFrom(interval(50, scheduler).pipe(map(() => !alive()), filter(Boolean), take(1), timeout({ first: graceMs, scheduler }), catchError(() => of(false))));
  if (!signal(pid, 'SIGTERM')) return alive() ? 'still running' : 'not running';
  if (await gone()) return 'terminated';
  signal(pid, 'SIGKILL');
  return (await gone()) ? 'killed' : 'still running';
}

const signal = (pid: number, name: NodeJS.Signals): boolean => {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
};
