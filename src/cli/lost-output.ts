/**
 * What a run (or `logs`) could not write: the events its `truncated` markers say are no longer held,
 * and how a command that lost output ends — with {@link EXIT_OUTPUT_LOST} and a last line, never with
 * the command's own exit code as if its output were whole.
 */
import { EXIT_OUTPUT_LOST } from './exit-codes';

/** A `truncated` marker: the events it skips, and the output bytes they held when it counted them. */
export interface LostMarker {
  readonly droppedEvents: number;
  /** Absent from a host that sent none; 0 for events dropped means unknown (the executor's window does not count them). */
  readonly droppedBytes?: number;
}

/** The bytes `marker` counted, or `undefined` when it did not (absent, or 0 for events dropped). */
const countedBytes = (marker: LostMarker): number | undefined =>
  marker.droppedBytes === undefined || (marker.droppedBytes === 0 && marker.droppedEvents > 0) ? undefined : marker.droppedBytes;

const plural = (count: number, unit: string): string => `${count} ${unit}${count === 1 ? '' : 's'}`;

/**
 * The note for history no longer held (without the `exec-rx: ` prefix), said where the hole is: the
 * events it skips, and the bytes when the marker counted them (`… (7 events, 4096 bytes)`).
 */
export function truncatedNote(marker: LostMarker & { readonly nextSeq: number }): string {
  const bytes = countedBytes(marker);
  const what = bytes === undefined ? plural(marker.droppedEvents, 'event') : `${plural(marker.droppedEvents, 'event')}, ${plural(bytes, 'byte')}`;
  return `output before seq ${marker.nextSeq} is no longer held (${what})`;
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
    const bytes = countedBytes(marker);
    if (bytes === undefined) this.bytesKnown = false;
    else this.bytes += bytes;
  }

  /** Whether any marker came. */
  get any(): boolean {
    return this.markers > 0;
  }

  /** `N events` or `N events (B bytes)`, for a line on stderr. */
  describe(): string {
    const events = plural(this.events, 'event');
    return this.bytesKnown && this.bytes > 0 ? `${events} (${plural(this.bytes, 'byte')})` : events;
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
