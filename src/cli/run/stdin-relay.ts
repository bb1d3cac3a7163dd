/**
 * `exec-rx run`'s stdin sinks on the executor's process: with `--tty`, straight to the command's pty
 * (end-of-file becomes Ctrl-D there); the relay that feeds them reads our stdin (see `terminal/stdin-relay`).
 */
import type { ExecProcess } from '../../exec/exec-process';
import type { StdinSink } from '../terminal/stdin-relay';

const CTRL_D = 0x04;

/** A pty command's stdin: bytes as they come; at end-of-file, Ctrl-D (twice after a partial line). */
export function ptySink(process: ExecProcess): StdinSink {
  let lastByte = 0x0a;
  return {
    write: async (chunk) => {
      if (chunk.byteLength > 0) lastByte = chunk[chunk.byteLength - 1] ?? lastByte;
      return process.write(chunk).then(
        () => true,
        () => false,
      );
    },
    end: async () => {
      const eof = lastByte === 0x0a || lastByte === 0x0d ? [CTRL_D] : [CTRL_D, CTRL_D];
      await process.write(Uint8Array.from(eof)).catch(() => undefined);
    },
    dispose: () => Promise.resolve(),
  };
}
