/**
 * `exec-rx run --tty`: the command's pty follows our terminal's size. Node emits `resize` on a tty
 * stdout when this process gets SIGWINCH; each one becomes an `ExecProcess.resize` (coalesced there).
 */
import { messageOf, ResizeFailedError } from '../../errors';
import type { ExecProcess } from '../../exec/exec-process';
import type { CliIo } from '../io';
import { terminalSize } from '../terminal/terminal-size';

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
      say(messageOf(error));
    });
  };
  io.stdout.on('resize', onResize);
  return { dispose: () => void io.stdout.off('resize', onResize) };
}
