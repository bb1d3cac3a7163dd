/** The command line's view of its own process: stdio, environment, directory and clock, injectable for specs. */
import type { Readable, Writable } from 'node:stream';
import type { SchedulerLike } from 'rxjs';

/**
 * This process's stdio, environment, directory and clock (injectable). A terminal stdout (`isTTY`) gives its
 * size in `columns` and `rows` and emits `resize` when it changes (as Node's `tty.WriteStream` does on SIGWINCH).
 */
export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable & { readonly isTTY?: boolean; readonly columns?: number; readonly rows?: number };
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** The command line's clock and timers (`run`'s cleanup bounds, the connection reports); specs pass a virtual-time scheduler. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** Ends the process at once with a status (`host`'s stop cut short by its timeout or a second signal). @default none: the status is only returned */
  readonly exit?: (status: number) => void;
}
