/**
 * How `exec-rx run --host` and `exec-rx logs` write a process's events: its bytes as they were, notes on
 * stderr, and no faster than our stdout and stderr take them (the events are pulled one at a time, and
 * not while more than `OUTPUT_MARK_BYTES` wait in our stdout or stderr, until its `drain`: the client
 * stops reading the HTTP body and TCP holds the host back, so a slow reader of our output makes us hold
 * at most the mark in memory).
 */
import type { HostProcessEvent } from '../../client/host-types';
import type { CliIo } from '../io';
import { truncatedNote } from '../lost-output';
import { writePastMark } from '../output-mark';
import { Scavenger } from './scavenger';

/**
 * How many events the CLI lets its client read ahead of what it wrote (`highWaterMark` of
 * `HostClient.eventStream`): enough to keep writing while the next network chunk comes, few enough that
 * a full stdout holds little more than a network chunk's worth of output in memory.
 */
export const EVENTS_AHEAD = 4;

/** Our stdout or stderr. */
type Output = CliIo['stdout'] | CliIo['stderr'];

/**
 * Writes an `output` event's bytes to our stdout (`stdout` and `pty`) or stderr (`stderr`), unchanged;
 * says the note for a `truncated` one; `exited` and `closed` write nothing. Returns the stream written
 * to when more than `OUTPUT_MARK_BYTES` now wait in it (wait for its `drain` before writing more; below
 * the mark, whatever `write()` answered, go on), else `undefined`.
 */
export function writeEvent(event: HostProcessEvent, io: Pick<CliIo, 'stdout' | 'stderr'>, say: (line: string) => void): Output | undefined {
  switch (event.type) {
    case 'output': {
      const output = event.stream === 'stderr' ? io.stderr : io.stdout;
      return writePastMark(output, event.chunk) ? output : undefined;
    }
    case 'truncated':
      say(truncatedNote(event));
      return undefined;
    case 'exited':
    case 'closed':
      return undefined;
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
 * Writes `events` to `io` ({@link writeEvent}; `onEvent` sees each event first) until they end or error,
 * or our stdout or stderr fails, and resolves with how it ended. It reads the next event only once the
 * last one was written: while more than `OUTPUT_MARK_BYTES` wait in our stdout (or stderr) it waits for
 * its `drain`, so a slow reader of our output holds back the events (and a `HostClient.eventStream`, the host). By then the stream
 * is cancelled (unless it ended) and released, and no listener on `io` is left. Never rejects.
 */
export async function pipeEvents(
  events: ReadableStream<HostProcessEvent>,
  io: Pick<CliIo, 'stdout' | 'stderr'>,
  say: (line: string) => void,
  onEvent?: (event: HostProcessEvent) => void,
): Promise<PipeEnd> {
  const reader = events.getReader();
  const scavenger = new Scavenger();
  let broken = false;
  /** Ends a wait for `drain` (set while one waits). */
  let wake: (() => void) | undefined;
  const onBrokenPipe = (): void => {
    broken = true;
    wake?.();
    // A read that waits for an event ends (done) at once.
    void reader.cancel().catch(() => undefined);
  };
  io.stdout.once('error', onBrokenPipe);
  io.stderr.once('error', onBrokenPipe);
  const drained = (output: Output): Promise<void> =>
    new Promise<void>((resolve) => {
      const done = (): void => {
        wake = undefined;
        output.off('drain', done);
        resolve();
      };
      wake = done;
      output.once('drain', done);
    });
  try {
    for (;;) {
      const next = await reader.read();
      if (broken) return { kind: 'brokenPipe' };
      if (next.done) return { kind: 'complete' };
      onEvent?.(next.value);
      if (next.value.type === 'output') scavenger.wrote(next.value.chunk.byteLength);
      const full = writeEvent(next.value, io, say);
      if (full !== undefined) await drained(full);
      if (broken) return { kind: 'brokenPipe' };
    }
  } catch (error: unknown) {
    return broken ? { kind: 'brokenPipe' } : { kind: 'error', error };
  } finally {
    io.stdout.off('error', onBrokenPipe);
    io.stderr.off('error', onBrokenPipe);
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
