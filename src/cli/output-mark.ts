/**
 * How much of a command's output exec-rx lets wait in its own stdout (or stderr) before it stops taking
 * more: `exec-rx run` (the executor's connection held paused) and `run --host` and `logs` (no next event
 * pulled, so TCP holds the host back) share this mark.
 */
import type { Writable } from 'node:stream';
import type { FlowHold } from '../rpc/connection-flow';

/**
 * Bytes waiting in our stdout or stderr (`writableLength`) past which the writer stops taking output
 * until that stream's `drain`: 2 MiB, the memory it costs per stream. Node's own mark (16 KiB, where
 * `write()` starts answering false) is a quarter of a pipe's kernel buffer: stopping there pauses the
 * source several times per 64 KiB a reader takes, and pausing `exec-rx run`'s source holds every process
 * on the executor. 2 MiB is the host's own bound for output not yet on disk (`highWaterBytes`) and about
 * 30 of the executor's 64 KiB chunks: enough that a reader never waits on a resume, small against the
 * host's own bounds.
 */
export const OUTPUT_MARK_BYTES = 2 * 1024 * 1024;

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
