/**
 * `exec-rx run --tty`: our terminal's size, which the command's pty gets at its start, and the one
 * follower that passes each later size on (Node emits `resize` on a tty stdout when this process gets
 * SIGWINCH). Each side gives only how a size reaches its pty: `run` through `ExecProcess.resize`
 * (`run/run-supervisor`), `run --host` through the host's resize call (`remote/remote-supervisor`).
 */
import type { TtySize } from '../../exec/tty-size';
import type { CliIo } from '../io';

/** Our terminal's size, when stdout is a terminal that knows it. */
export function terminalSize(io: Pick<CliIo, 'stdout'>): TtySize | undefined {
  const { isTTY, rows, columns } = io.stdout;
  if (isTTY !== true || rows === undefined || columns === undefined || rows < 1 || columns < 1) return undefined;
  return { rows, cols: columns };
}

/** Where {@link followTerminalSize} sends our terminal's size: a command's sized pty. */
export interface SizeTarget {
  /** Gives the pty `size`: resolves once applied, rejects when it was not. */
  resize(size: TtySize): Promise<unknown>;
  /** The line that says a failed resize, or `undefined` for one not worth saying (it only lost a race with the command's end). */
  describe(error: unknown): string | undefined;
}

/** A running follower: `dispose()` stops it. */
export interface SizeFollower {
  /** Stops following: no later size is sent, no later failure said; idempotent. */
  dispose(): void;
}

/**
 * Sends our terminal's size to `target` on each `resize` of our stdout, until `dispose()`: one call at a
 * time, and a resize while one is under way sends the size of then once it settled (the last size wins).
 * The first failure `target.describe` words is `say`d, later ones are not; none ends the run.
 */
export function followTerminalSize(io: Pick<CliIo, 'stdout'>, target: SizeTarget, say: (line: string) => void): SizeFollower {
  let inFlight = false;
  let pending = false;
  let reported = false;
  let disposed = false;
  const send = (): void => {
    const size = terminalSize(io);
    if (disposed || size === undefined) return;
    inFlight = true;
    target
      .resize(size)
      .catch((error: unknown) => {
        const line = reported || disposed ? undefined : target.describe(error);
        if (line === undefined) return;
        reported = true;
        say(line);
      })
      .finally(() => {
        inFlight = false;
        if (pending) {
          pending = false;
          send();
        }
      });
  };
  const onResize = (): void => {
    if (inFlight) pending = true;
    else send();
  };
  io.stdout.on('resize', onResize);
  return {
    dispose: () => {
      disposed = true;
      io.stdout.off('resize', onResize);
    },
  };
}
