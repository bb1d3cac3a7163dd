/**
 * The sequenced events of a process, decoded from `process/output`, `process/exited` and
 * `process/closed` (docs/protocol.md#process-events). They live here, at the bottom, because every
 * layer that touches process output shares them: the notification router, the reorder buffer, the
 * history and the public API.
 */

/** The stream a chunk of output came from: `pty` for a tty process (stdout and stderr merged). */
export type OutputStream = 'stdout' | 'stderr' | 'pty';

/** A chunk of process output. `chunk` holds the raw bytes (never base64). */
export interface OutputEvent {
  /** The event's kind. */
  readonly type: 'output';
  /** The event's sequence number: contiguous per process, starting at 1. */
  readonly seq: number;
  /** The stream the chunk came from. */
  readonly stream: OutputStream;
  /** The raw bytes (at most 8192 per chunk from the executor). */
  readonly chunk: Uint8Array;
}

/** The process exited. Output may still follow it (a background child holding the pipe); only `closed` ends. */
export interface ExitedEvent {
  /** The event's kind. */
  readonly type: 'exited';
  /** The event's sequence number. */
  readonly seq: number;
  /** Exit status, or 128 + signal number for a signalled process (137 after terminate, 130 after interrupt). */
  readonly exitCode: number;
  /** Whether the executor classified a sandboxed failure as a sandbox denial. */
  readonly sandboxDenied: boolean;
}

/** All output streams ended after the exit: the last event of a process, with the highest seq. */
export interface ClosedEvent {
  /** The event's kind. */
  readonly type: 'closed';
  /** The event's sequence number: the process's highest. */
  readonly seq: number;
}

/** The events the executor numbers: one counter per process, shared by output, exited and closed. */
export type SequencedEvent = OutputEvent | ExitedEvent | ClosedEvent;
