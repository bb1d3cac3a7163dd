/**
 * What a run (or `logs`) could not write: the events its `truncated` markers say are no longer held,
 * and how a command that lost output ends — with {@link EXIT_OUTPUT_LOST} and a last line, never with
 * the command's own exit code as if its output were whole.
 */
import { EXIT_OUTPUT_LOST } from './exit-codes';

/** The note for history no longer held (without the `exec-rx: ` prefix), said where the hole is. */
export const truncatedNote = (nextSeq: number, droppedEvents: number): string =>
  `output before seq ${nextSeq} is no longer held (${droppedEvents} event${droppedEvents === 1 ? '' : 's'})`;

/** A `truncated` marker: the library's carries the bytes it dropped; the host client's does not (yet). */
export interface LostMarker {
  readonly droppedEvents: number;
  readonly droppedBytes?: number;
}

/** The sum of the `truncated` markers a writer of output met. */
export class LostOutput {
  private markers = 0;
  private events = 0;
  private bytes = 0;
  /** Whether every marker said how many bytes it dropped (the executor's own window does not: 0). */
  private bytesKnown = true;

  /** Counts one marker. */
  add(marker: LostMarker): void {
    this.markers += 1;
    this.events += marker.droppedEvents;
    if (marker.droppedBytes === undefined || (marker.droppedBytes === 0 && marker.droppedEvents > 0)) this.bytesKnown = false;
    else this.bytes += marker.droppedBytes;
  }

  /** Whether any marker came. */
  get any(): boolean {
    return this.markers > 0;
  }

  /** `N events` or `N events (B bytes)`, for a line on stderr. */
  describe(): string {
    const events = `${this.events} event${this.events === 1 ? '' : 's'}`;
    return this.bytesKnown && this.bytes > 0 ? `${events} (${this.bytes} bytes)` : events;
  }
}

/** How a command that ran to its end ends: its exit status, and the last line to say (without `exec-rx: `) when output was lost. */
export interface RunEnd {
  readonly status: number;
  readonly line?: string;
}

/**
 * The end of a run whose command exited with `exitCode` (`undefined`: `logs`, which does not report
 * it): that code when nothing was lost, else {@link EXIT_OUTPUT_LOST} and a line naming what was lost
 * and the command's own exit code.
 */
export function endAfter(exitCode: number | undefined, lost: LostOutput): RunEnd {
  if (!lost.any) return { status: exitCode ?? 0 };
  const what = `output was lost: ${lost.describe()} no longer held when they were to be written`;
  return { status: EXIT_OUTPUT_LOST, line: exitCode === undefined ? what : `${what}; the command exited with ${exitCode}` };
}
