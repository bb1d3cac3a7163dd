/**
 * `exec-rx run --tty`: the command's pty follows our terminal's size. Node emits `resize` on a tty
 * stdout when this process gets SIGWINCH; each one becomes an `ExecProcess.resize` (coalesced there).
 */
import { ResizeFailedError } from '../../errors';
import type { ExecProcess } from '../../exec/exec-process';
import type { TtySize } from '../../exec/tty-size';
import type { CliIo } from '../io';

/** Our terminal's size, when stdout is a terminal that knows it. */
export function terminalSize(io: CliIo): TtySize | undefined {
  const { isTTY, rows, columns } = io.stdout;
  if (isTTY !== true || rows === undefined || columns === undefined || rows < 1 || columns < 1) return undefined;
  return { rows, cols: columns };
}

/**
 * Resizes `process`'s pty whenever our stdout emits `resize`, until `dispose()`. Does nothing for a
 * process without a sized pty. The first failed resize is `say`d (later ones are not, nor those that
 * only lost a race with the command's end); none ends the run.
 */
export function followTerminalSize(process: ExecProcess, io: CliIo, say: (line: string) => void): { dispose(): void } {
  if (process.ttySize === undefined) return { dispose: () => undefined };
  let reported = false;
  const onResize = (): void => {
    const size = terminalSize(io);
    if (size === undefined) return;
    process.resize(size.rows, size.cols).catch((error: unknown) => {
      if (reported || (error instanceof ResizeFailedError && error.reason === 'ended')) return;
      reported = true;
      say(error instanceof Error ? error.message : String(error));
    });
  };
  io.stdout.on('resize', onResize);
  return { dispose: () => void io.stdout.off('resize', onResize) };
}
