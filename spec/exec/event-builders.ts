import type { ClosedEvent, ExitedEvent, OutputEvent, OutputStream } from '../../src/wire/process-event';

/** Builders for process events in specs. */
export const bytes = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));

export const output = (seq: number, text: string, stream: OutputStream = 'stdout'): OutputEvent => ({
  type: 'output',
  seq,
  stream,
  chunk: bytes(text),
});

export const outputBytes = (seq: number, chunk: Uint8Array, stream: OutputStream = 'stdout'): OutputEvent => ({
  type: 'output',
  seq,
  stream,
  chunk,
});

export const exited = (seq: number, exitCode = 0, sandboxDenied = false): ExitedEvent => ({
  type: 'exited',
  seq,
  exitCode,
  sandboxDenied,
});

export const closed = (seq: number): ClosedEvent => ({ type: 'closed', seq });

/** Runs `fn` and returns what it threw (fails the spec when it does not throw). */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error: unknown) {
    return error;
  }
  throw new Error('expected the call to throw');
}

/**
 * An error as a plain object (class name, message and every own field such as `code` or `processId`):
 * Jest's toEqual compares only the message of Error instances.
 */
export function plain(error: unknown): unknown {
  return error instanceof Error ? { ...error, class: error.constructor.name, message: error.message } : error;
}
