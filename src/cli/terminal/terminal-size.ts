/**
 * `exec-rx run --tty`: our terminal's size, which the command's pty gets at its start and follows (Node
 * emits `resize` on a tty stdout when this process gets SIGWINCH): see `run/terminal-size` and
 * `remote/remote-supervisor` for how each side passes it on.
 */
import type { TtySize } from '../../exec/tty-size';
import type { CliIo } from '../io';

/** Our terminal's size, when stdout is a terminal that knows it. */
export function terminalSize(io: CliIo): TtySize | undefined {
  const { isTTY, rows, columns } = io.stdout;
  if (isTTY !== true || rows === undefined || columns === undefined || rows < 1 || columns < 1) return undefined;
  return { rows, cols: columns };
}
