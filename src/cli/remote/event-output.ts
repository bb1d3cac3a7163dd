/** How `exec-rx run --host` and `exec-rx logs` write a process's events: its bytes as they were, notes on stderr. */
import type { HostProcessEvent } from '../../client/host-types';
import type { CliIo } from '../io';

/** The note for history the host no longer holds (without the `exec-rx: ` prefix). */
export const truncatedNote = (nextSeq: number, droppedEvents: number): string =>
  `output before seq ${nextSeq} is no longer held (${droppedEvents} event${droppedEvents === 1 ? '' : 's'})`;

/**
 * Writes an `output` event's bytes to our stdout (`stdout` and `pty`) or stderr (`stderr`), unchanged;
 * says the note for a `truncated` one; `exited` and `closed` write nothing.
 */
export function writeEvent(event: HostProcessEvent, io: Pick<CliIo, 'stdout' | 'stderr'>, say: (line: string) => void): void {
  switch (event.type) {
    case 'output':
      (event.stream === 'stderr' ? io.stderr : io.stdout).write(event.chunk);
      return;
    case 'truncated':
      say(truncatedNote(event.nextSeq, event.droppedEvents));
      return;
    case 'exited':
    case 'closed':
      return;
  }
}
