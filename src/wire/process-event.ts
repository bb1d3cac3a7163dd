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
  readonly type: 'output';
  readonly seq: number;
  readonly stream: OutputStream;
  readonly chunk: Uint8Array;
}

/** The process exited. Output may still follow it (a background child holding the pipe); only `closed` ends. */
export interface ExitedEvent {
  readonly type: 'exited';
  readonly seq: number;
  /** Exit status, or 128 + signal number for a signalled process (137 after terminate, 130 after interrupt). */
  readonly exitCode: number;
  readonly sandboxDenied: boolean;
}

/** All output streams ended after the exit: the last event of a process, with the highest seq. */
export interface ClosedEvent {
  readonly type: 'closed';
  readonly seq: number;
}

/** The events the executor numbers: one counter per process, shared by output, exited and closed. */
export type SequencedEvent = OutputEvent | ExitedEvent | ClosedEvent;
