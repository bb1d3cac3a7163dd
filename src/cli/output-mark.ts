/**
 * How much of a command's output exec-rx lets wait in its own stdout (or stderr) before it stops taking
 * more: `exec-rx run` (the executor's connection held paused) and `run --host` and `logs` (no next event
 * pulled, so TCP holds the host back) share this mark.
 */
import type { Writable } from 'node:stream';
import type { FlowHold } from '../rpc/connection-flow';

/**
 * Bytes waiting in our stdout or stderr (`writableLength`) past which the writer stops taking output
 * until that stream's `drain`: 256 KiB, what it holds per stream. Node's own mark (16 KiB, where
 * `write()` starts answering false) is a quarter of a pipe's kernel buffer, and pausing `exec-rx run`'s
 * source holds every process on the executor; 256 KiB is four pipe buffers, about 32 of the executor's
 * 8 KiB chunks. A larger mark costs more than itself (bench/results/issue-32-cli.md): chunks that wait
 * that long outlive V8's young generation, and their 64 KiB arenas are freed only by a full GC, so at
 * 1–2 MiB the cli's peak RSS grew by 20–25 MiB over the old policy's (past the 32 MiB the memory specs
 * allow over idle) and at 4 MiB by 20–40 MiB, for no measurable gain in throughput.
 */
export const OUTPUT_MARK_BYTES = 256 * 1024;

/**
 * Writes `chunk` to `out` whatever `write()` answers (Node buffers it), and returns whether `out` now
 * holds more than {@link OUTPUT_MARK_BYTES}: then the caller takes no more output until `out`'s 'drain'.
 * That 'drain' comes: past the mark `write()` answered false (the stream's own mark is lower), and Node
 * emits 'drain' once such a stream has written out everything it held (`writableNeedDrain` is checked,
 * so a stream with a mark of its own above ours never makes the caller wait).
 */
export function writePastMark(out: Writable, chunk: Uint8Array): boolean {
  out.write(chunk);
  return out.writableLength > OUTPUT_MARK_BYTES && out.writableNeedDrain;
}

/** What {@link drainGate} returns: its writer, and how to detach. */
export interface DrainGate {
  /** Writes a chunk ({@link writePastMark}); past the mark, takes a hold until `out` drains. */
  write(chunk: Uint8Array): void;
  /** Stops listening for 'drain' and releases a hold it has. */
  stop(): void;
}

/**
 * Writes to `out`; when a write leaves more than {@link OUTPUT_MARK_BYTES} waiting in it, takes one
 * `hold()` (a paused source) until `out`'s 'drain'. Below the mark nothing is held, whatever `write()`
 * answered. The caller's `stop()` releases the hold.
 */
export function drainGate(out: Writable, hold: () => FlowHold): DrainGate {
  let held: FlowHold | undefined;
  const release = (): void => {
    const current = held;
    held = undefined;
    current?.release();
  };
  return {
    write: (chunk) => {
      // A counter check per chunk; a hold (and a 'drain' listener) only when crossing the mark.
      if (writePastMark(out, chunk) && held === undefined) {
        held = hold();
        out.once('drain', release);
      }
    },
    stop: () => {
      out.off('drain', release);
      release();
    },
  };
}
