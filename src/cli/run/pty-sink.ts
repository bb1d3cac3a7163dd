/**
 * `exec-rx run --tty`'s stdin sink: the command's pty on the executor, written through `ExecProcess`
 * (end-of-file becomes Ctrl-D there). Only a sink, not a relay: the one relay that reads our stdin into
 * a sink is `terminal/stdin-relay`, shared with `run --host`; this one stays under `run/` because it
 * writes through the library's `ExecProcess`, which `run --host` (the host's stdin calls) never has.
 * Without `--tty`, `run`'s sink is the FIFO helper of `exec/stdin-fifo`.
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
