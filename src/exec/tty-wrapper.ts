/**
 * A pty of a given size on a 0.171.0 executor, whose `process/start` takes no size and which has no
 * `process/resize`. A pty's size can be set from inside it and from any process that can open it:
 * 1. a check process makes sure `sh`, `stty` and `tty` exist and that `sh` can `exec` the program (if
 *    not, the command is started exactly as without a size, so a missing program fails with the
 *    executor's own SpawnError, the same as an unsized start);
 * 2. the command starts through a wrapper, `sh -c WRAPPER exec-rx-tty <file> <rows> <cols> <argv...>`,
 *    which sets the size with `stty` on its own stdin (the pty), records the pty's path in `<file>` under
 *    the executor's temp dir, and `exec`s the command: same pid, argv, exit code, signals and output (the
 *    wrapper prints nothing);
 * 3. a resize runs `stty -F <the recorded pty> rows R cols C` as its own process on the executor; the
 *    kernel then sends the command SIGWINCH. Resizes are coalesced (see {@link TtyResizer});
 * 4. once the command exited (or failed), `<file>` is removed by one more helper (best effort).
 * Every helper is unlisted and its history released after use.
 */
import { randomUUID } from 'node:crypto';
import { firstValueFrom } from 'rxjs';
import { filter, take } from 'rxjs/operators';
import { HelperFailedError, SpawnError } from '../errors';
import type { EnvironmentInfo } from '../wire/environment';
import type { ExecProcess } from './exec-process';
import type { SendParams, SendStart, StartedProcess, StartOptions } from './start-params';
import { executorTempDir } from './temp-dir';
import { TtyResizer } from './tty-resizer';
import type { TtySize } from './tty-size';

/** What the sized start needs of its backend. */
export interface TtyHost {
  /** The backend's raw `process/start` (never its `start` again): the wrapper, the command unsized, every helper. */
  readonly send: SendStart;
  /** Keeps track of work left running after the command ended (removing the recorded path), to await before closing. */
  readonly track: (chore: Promise<void>) => void;
}

/** Exit status of {@link CHECK} when `stty` or `tty` is missing (any other non-zero: `sh` cannot exec the program). */
const NO_STTY = 3;

/**
 * `sh -c CHECK exec-rx-tty <program>`: 0 when the wrapper can size a pty and `exec` the program. The
 * program is looked up in PATH as `exec` does (a builtin of the same name, such as `printf`, does not count).
 * A program named `-...` is left to the executor: `exec` in some shells would take it for an option.
 */
export const CHECK = [
  `command -v stty >/dev/null 2>&1 && command -v tty >/dev/null 2>&1 || exit ${NO_STTY}`,
  'case "$1" in',
  '-*) ;;',
  '*/*) [ -f "$1" ] && [ -x "$1" ] && exit 0 ;;',
  '?*) set -f; IFS=:; for d in $PATH; do [ -f "${d:-.}/$1" ] && [ -x "${d:-.}/$1" ] && exit 0; done ;;',
  'esac',
  'exit 4',
].join('\n');

/** `sh -c WRAPPER exec-rx-tty <file> <rows> <cols> <argv...>`: sizes its pty, records it, becomes the command. */
export const WRAPPER = 'stty rows "$2" cols "$3" 2>/dev/null; tty >"$1" 2>/dev/null; shift 3; exec "$@"';

/**
 * `sh -c RESIZE <file> <rows> <cols> <-F|-f>`: waits (5 s at most) for the wrapper to have recorded the
 * pty (a resize may come right after the start), then sizes it, setting only what changed: `stty` sets
 * rows and cols one at a time, so changing both sends two SIGWINCHes (the last with the full size).
 */
export const RESIZE = [
  'i=0',
  'while :; do',
  '  p=$(cat "$0" 2>/dev/null)',
  '  case "$p" in /dev/*) [ -c "$p" ] && break ;; esac',
  '  i=$((i + 1)); [ "$i" -le 100 ] || { echo "no terminal recorded in $0" >&2; exit 1; }',
  '  sleep 0.05',
  'done',
  's=$(stty "$3" "$p" size 2>/dev/null) || s=',
  'a=',
  '[ "${s% *}" = "$1" ] || a="rows $1"',
  '[ "${s#* }" = "$2" ] || a="$a cols $2"',
  '[ -n "$a" ] || exit 0',
  'exec stty "$3" "$p" $a',
].join('\n');

const UNLISTED = { unlisted: true } as const;

/**
 * Starts `params.argv` on a pty of `size` (see the module comment); resolves with `sized: true` and a
 * resizable process, or, where sizing is impossible, with the command started unsized (`sized: false`,
 * `unsizedReason`). Rejects with the start's typed error (SpawnError for a missing program, exactly as an
 * unsized start would); nothing is left running then.
 */
export async function startSizedTty(host: TtyHost, params: SendParams, size: TtySize, options: StartOptions, info: EnvironmentInfo | undefined): Promise<StartedProcess> {
  const start = host.send;
  const unsized = async (reason: string): Promise<StartedProcess> => ({ ...(await start({ ...params, tty: true }, options)), sized: false, unsizedReason: reason });
  if (info?.platformOs === 'windows') return unsized('a Windows executor has no sh and stty to size a terminal with');
  if (params.arg0 !== undefined && params.arg0 !== null) return unsized('arg0 cannot pass through the sizing wrapper');
  const { processId: _id, argv, tty: _tty, arg0: _arg0, pipeStdin: _stdin, ...base } = params;
  const program = argv[0] ?? '';
  const status = await runCheck(start, { ...base, argv: ['sh', '-c', CHECK, 'exec-rx-tty', program] });
  if (status === 'no-sh') return unsized('the executor has no sh');
  if (status === NO_STTY) return unsized('the executor has no stty or tty');
  // sh cannot exec it: the start as without a size raises the executor's own error (or runs it unsized).
  if (status !== 0) return unsized(`sh cannot run ${program}`);

  const tempDir = executorTempDir(info);
  const file = `${tempDir.replace(/\/+$/, '')}/exec-rx-tty-${randomUUID()}`;
  // Listed as the command itself: a process list shows what the user ran, not the wrapper.
  const wrapper = ['sh', '-c', WRAPPER, 'exec-rx-tty', file, String(size.rows), String(size.cols), ...argv];
  const started = await start({ ...params, tty: true, argv: wrapper }, { ...options, listedArgv: options.listedArgv ?? argv });
  // The command's cwd may go away while it runs; the temp dir holds the recorded path.
  attachResizer(host, started.process, file, size, { ...base, cwd: tempDir }, () => Promise.resolve(info));
  return { ...started, sized: true, ttyPathFile: file };
}

/** The base environment of the helpers of a sized tty taken back: the executor's core set (PATH, HOME ...). */
const CORE_ENV_POLICY: NonNullable<SendParams['envPolicy']> = { inherit: 'core', ignoreDefaultExcludes: false, exclude: [], set: {}, includeOnly: [] };

/**
 * Makes a sized tty resizable again after a host restart (`EnvironmentManager.adoptAcceptedWebsocket`
 * took the process back): its wrapper recorded the pty's path in `file` (`StartedProcess.ttyPathFile`),
 * which the resize helper reads as before; the helpers run in the executor's temp dir (`info`, asked at
 * the first resize) with the executor's core environment. The size is unknown (`ttySize` undefined)
 * until a resize was applied. Once the process ends, `file` is removed as after a start.
 */
export function resumeSizedTty(host: TtyHost, process: ExecProcess, file: string, info: () => Promise<EnvironmentInfo | undefined>): void {
  let asked: Promise<EnvironmentInfo | undefined> | undefined;
  const infoOnce = (): Promise<EnvironmentInfo | undefined> => (asked ??= info().catch(() => undefined));
  attachResizer(host, process, file, undefined, { envPolicy: CORE_ENV_POLICY, cwd: undefined }, infoOnce);
}

/** What a helper of a sized tty starts with, but its argv (`cwd` undefined: the executor's temp dir). */
type HelperBase = Omit<SendParams, 'argv' | 'cwd' | 'processId' | 'tty' | 'arg0' | 'pipeStdin'> & { readonly cwd: string | undefined };

/** Resizes `process` through helpers that `stty` the pty recorded in `file`; removes `file` once it ended. */
function attachResizer(host: TtyHost, process: ExecProcess, file: string, size: TtySize | undefined, base: HelperBase, info: () => Promise<EnvironmentInfo | undefined>): void {
  const start = host.send;
  const helper = async (argv: readonly string[]): Promise<{ readonly exitCode: number; readonly stderr: string }> => {
    const found = await info();
    return runHelper(start, { ...base, cwd: base.cwd ?? executorTempDir(found), argv: [...argv] });
  };
  const apply = async (next: TtySize): Promise<void> => {
    const sttyFile = (await info())?.platformOs === 'macos' ? '-f' : '-F';
    const { exitCode, stderr } = await helper(['sh', '-c', RESIZE, file, String(next.rows), String(next.cols), sttyFile]);
    if (exitCode !== 0) throw new HelperFailedError('ttySize', stderr.trim().split('\n')[0] || `stty exited with ${exitCode}`);
  };
  const resizer = new TtyResizer(process.processId, size, apply);
  process.attachResizer(resizer);
  removeWhenEnded(process, resizer, () => host.track(helper(['rm', '-f', '--', file]).then(noop, noop)));
}

/** The check's exit status, or `no-sh` when `sh` could not be spawned. */
async function runCheck(start: SendStart, params: SendParams): Promise<number | 'no-sh'> {
  let helper: StartedProcess;
  try {
    helper = await start(params, UNLISTED);
  } catch (error: unknown) {
    if (error instanceof SpawnError) return 'no-sh';
    throw error;
  }
  try {
    return await firstValueFrom(helper.process.exitCode$);
  } finally {
    helper.process.release();
  }
}

/** Runs a helper to its end; resolves with its exit code and stderr, its history released. */
async function runHelper(start: SendStart, params: SendParams): Promise<{ readonly exitCode: number; readonly stderr: string }> {
  const { process } = await start(params, UNLISTED);
  try {
    const { exitCode, stderr } = await process.collect();
    return { exitCode, stderr };
  } finally {
    process.release();
  }
}

/** Once the command is no longer running: no more resizes, and the recorded path is removed (best effort). */
function removeWhenEnded(process: ExecProcess, resizer: TtyResizer, remove: () => void): void {
  process.state$.pipe(filter((state) => state !== 'running'), take(1)).subscribe(() => {
    resizer.end();
    remove();
  });
}

const noop = (): void => undefined;
