/** What `ExecBackend.start` takes and resolves with. */
import type { ExecParams, ExecResponse } from '../wire/process';
import type { ExecProcess } from './exec-process';
import type { FifoFeeder } from './fifo-feeder';
import type { TtySize } from './tty-size';

/**
 * What `start` takes: the wire's ExecParams, with conveniences. `processId` is generated when absent (an
 * id stays reserved on the executor for 80 s after its process closes); `cwd` may be a native absolute
 * path or a `file://` URI; `env` defaults to `{}` (an empty environment).
 *
 * `tty`: `true` gives the command a pty of the executor's default size (24x80); a {@link TtySize} gives
 * it a pty of that size (integers from 1 to 10000, else InvalidTtySizeError before anything is sent),
 * which `ExecProcess.resize` can change later. The 0.171.0 protocol has no size, so the command is
 * started through a `sh` wrapper that sets the size (`stty`) and then `exec`s it: same pid, argv, exit
 * code, signals and output. Where the executor cannot do that (no `sh` or `stty`, Windows, `arg0` set)
 * the command starts unsized and `StartedProcess.unsizedReason` says why. @default false
 *
 * `stdin: 'fifo'`: stdin that can be ended, which the 0.171.0 executor cannot do with `pipeStdin` (a
 * stdin it writes to but never closes). The command reads a FIFO on the executor (in its temp dir),
 * fed by a helper process; `StartedProcess.feeder` writes and ends it. A program that is missing or
 * not executable is refused with CannotStartError (127 / 126, as a shell would). With `tty` it is
 * ignored: a pty is written to directly (`ExecProcess.write`, Ctrl-D ends the input). On a Windows
 * executor, which has no `sh` or `mkfifo`, the command starts without stdin (it reads end-of-file at
 * once; not with `pipeStdin`, whose input could never end): no `feeder`, and
 * `StartedProcess.noStdinReason` says why. @default undefined (stdin as `pipeStdin` says)
 */
export type StartParams = Omit<ExecParams, 'processId' | 'cwd' | 'env' | 'tty'> & {
  /** Our key for the process (unique in the session, reserved for 80 s after it closes). @default a random UUID */
  readonly processId?: string;
  /** The working directory: a native absolute path or a `file://` URI. */
  readonly cwd: string;
  /** The child's exact environment (or what is overlaid on `envPolicy`'s base). @default `{}`: empty */
  readonly env?: Readonly<Record<string, string>>;
  /** A pseudo-terminal (output as stream `pty`; a tty spawn needs `PATH` in `env`), optionally sized (see above). @default false */
  readonly tty?: boolean | TtySize;
  /** `'fifo'`: stdin with end-of-file through a FIFO (see above). @default undefined */
  readonly stdin?: 'fifo';
};

/**
 * @internal What one raw `process/start` takes (`ExecBackend.send`): no size (`tty: true` is the
 * executor's default 24x80) and no FIFO; the sized tty's and the stdin FIFO's wrappers and helpers go
 * out this way.
 */
export type SendParams = Omit<StartParams, 'tty' | 'stdin'> & {
  /** A pseudo-terminal of the executor's default size. @default false */
  readonly tty?: boolean;
};

/** @internal `ExecBackend.send`: one `process/start`, exactly as asked. */
export type SendStart = (params: SendParams, options?: StartOptions) => Promise<StartedProcess>;

/** How a started process appears in its environment's process list (`Environment.processes$`), and its cancellation. */
export interface StartOptions {
  /**
   * Leave it off the list (a helper process of a wrapper, such as the stdin FIFO's). Its history is
   * still kept, and released like any other when it is.
   * @default false
   */
  readonly unlisted?: boolean;
  /** The argv to list, when the command is started through a wrapper. @default params.argv */
  readonly listedArgv?: readonly string[];
  /**
   * Called once, synchronously, when the process leaves the list: released after it ended, or taken
   * off for `keepClosedMs` / `keepClosed` (its history is released then). Not for an unlisted process,
   * nor when the environment fails or closes (its processes stay listed, as `failed`). What it throws
   * is ignored. For what a caller keeps per process, to let go of it with the process.
   * @default none
   */
  readonly onDelisted?: () => void;
  /**
   * Cancels the start: an abort rejects it with `signal.reason` (an already-aborted signal rejects at
   * once, nothing sent). Before `process/start` went out nothing runs. Once it went out the executor
   * may have started the process: the library then sends `process/terminate` for its processId (best
   * effort, as after a connection lost before the reply), so it may run briefly, and its output is not
   * readable. For a sized tty or `stdin: 'fifo'`, helper processes already started finish on their own
   * (the FIFO is removed), and the command itself is not started after the abort.
   * @default none
   */
  readonly signal?: AbortSignal;
}

/** What `start` resolves with. */
export interface StartedProcess {
  /** The running process: its events, output views, stdin and signals. */
  readonly process: ExecProcess;
  /**
   * The sandbox it runs in: `none`, `macosSeatbelt`, `linuxSeccomp`, `windowsRestrictedToken` or
   * `windowsMxc`; `undefined` from a legacy executor.
   */
  readonly sandboxType: ExecResponse['sandboxType'];
  /** Whether the pty was sized as asked (`tty: { rows, cols }`); `false` for every other start. */
  readonly sized: boolean;
  /** Why a start asked for a size started unsized (at the executor's default size, not resizable). */
  readonly unsizedReason?: string;
  /**
   * For a sized tty: the file in the executor's temp dir where the wrapper recorded the pty's path (what
   * each resize's helper sizes); a host that persists its processes keeps it. Removed once the command ended.
   */
  readonly ttyPathFile?: string;
  /**
   * The command's stdin, for a start with `stdin: 'fifo'` (none with `tty`, nor on Windows): write to
   * it, end it, and `dispose()` it once done (the caller's; nothing disposes it otherwise).
   */
  readonly feeder?: FifoFeeder;
  /** Why a start with `stdin: 'fifo'` runs without stdin (a Windows executor: no `sh`, no `mkfifo`). */
  readonly noStdinReason?: string;
}
