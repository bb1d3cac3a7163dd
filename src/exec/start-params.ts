/** What `ExecBackend.start` takes and resolves with. */
import type { ExecParams, ExecResponse } from '../wire/process';
import type { ExecProcess } from './exec-process';
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
};

/** How a started process appears in its environment's process list (`Environment.processes$`). */
export interface StartOptions {
  /**
   * Leave it off the list (a helper process of a wrapper, such as the stdin FIFO's). Its history is
   * still kept, and released like any other when it is.
   * @default false
   */
  readonly unlisted?: boolean;
  /** The argv to list, when the command is started through a wrapper. @default params.argv */
  readonly listedArgv?: readonly string[];
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
}
