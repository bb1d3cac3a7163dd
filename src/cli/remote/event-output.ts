/** How `exec-rx run --host` and `exec-rx logs` write a process's events: its bytes as they were, notes on stderr. */
import type { Observable } from 'rxjs';
import { Subscription } from 'rxjs';
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

/** How {@link pipeEvents} ended. */
export type PipeEnd =
  /** The events completed (the process closed, or what the host holds was written). */
  | { readonly kind: 'complete' }
  /** The events errored (a HostApiError, for the caller to describe). */
  | { readonly kind: 'error'; readonly error: unknown }
  /** Our stdout or stderr failed: its reader went away (a broken pipe). */
  | { readonly kind: 'brokenPipe' };

/**
 * Writes `events$` to `io` ({@link writeEvent}; `onEvent` sees each event first) until the events
 * complete or error, or our stdout or stderr fails, and resolves with how it ended. By then the
 * subscription and its listeners on `io` are gone. Never rejects.
 */
export function pipeEvents(events$: Observable<HostProcessEvent>, io: Pick<CliIo, 'stdout' | 'stderr'>, say: (line: string) => void, onEvent?: (event: HostProcessEvent) => void): Promise<PipeEnd> {
  return new Promise<PipeEnd>((resolve) => {
    // A container, so that an end while subscribing (events that complete at once) also ends what it adds.
    const subscription = new Subscription();
    let ended = false;
    const end = (how: PipeEnd): void => {
      if (ended) return;
      ended = true;
      subscription.unsubscribe();
      io.stdout.off('error', onBrokenPipe);
      io.stderr.off('error', onBrokenPipe);
      resolve(how);
    };
    const onBrokenPipe = (): void => end({ kind: 'brokenPipe' });
    io.stdout.once('error', onBrokenPipe);
    io.stderr.once('error', onBrokenPipe);
    subscription.add(
      events$.subscribe({
        next: (event) => {
          onEvent?.(event);
          writeEvent(event, io, say);
        },
        error: (error: unknown) => end({ kind: 'error', error }),
        complete: () => end({ kind: 'complete' }),
      }),
    );
  });
}
