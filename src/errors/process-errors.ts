/** Errors of one process or its streams: its start, its output, its terminal, its file handles. */
import { ExecClientError } from './exec-client-error';

/** A process failed: its stream ended without `closed` (recovery error, environment failure, ...). */
export class ProcessFailedError extends ExecClientError {
  readonly code = 'PROCESS_FAILED';
  constructor(
    /** The failed process. */ readonly processId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Output the process produced is no longer retained by the executor: a hole that cannot be filled. */
export class ProcessGapError extends ExecClientError {
  readonly code = 'PROCESS_GAP';
  constructor(
    /** The process with the hole. */ readonly processId: string,
    /** The first seq that is missing. */ readonly missingFromSeq: number,
    /** The last seq that is missing. */ readonly missingToSeq: number,
  ) {
    super(
      `failed to recover process ${processId}: process events are no longer retained while recovering through sequence ${missingToSeq} (missing from ${missingFromSeq})`,
    );
  }
}

/** The per-process reorder buffer overflowed (too many or too large events waiting for a missing seq). */
export class ReorderOverflowError extends ExecClientError {
  readonly code = 'REORDER_OVERFLOW';
  constructor(
    /** The process whose buffer overflowed. */ readonly processId: string,
    detail: string,
  ) {
    super(`process ${processId} event reorder buffer ${detail}`);
  }
}

/** A bounded consumer (async iterator) fell behind and events had to be dropped. */
export class ConsumerOverflowError extends ExecClientError {
  readonly code = 'CONSUMER_OVERFLOW';
  constructor(
    /** How many events the consumer missed. */ readonly missedEvents: number,
    /** The capacity of its buffer, in events. */ readonly bufferSize: number,
  ) {
    super(`consumer fell behind: buffer of ${bufferSize} events overflowed, ${missedEvents} event(s) missed`);
  }
}

/** A file handle did not survive a reconnect and could not be reopened (a `replace` handle). */
export class HandleLostError extends ExecClientError {
  readonly code = 'HANDLE_LOST';
  constructor(
    /** The lost handle's `handleId`. */ readonly handleId: string,
    options?: { cause?: unknown },
  ) {
    super(`file handle \`${handleId}\` was lost in a reconnect; a write handle cannot be reopened without truncating`, options);
  }
}

/**
 * The program could not be started, as a shell would say: 127 when it is not found (on `PATH`, or as a
 * path), 126 when it is not executable. Raised by starts that check the program before running it (the
 * stdin FIFO); nothing is left running.
 */
export class CannotStartError extends ExecClientError {
  readonly code = 'CANNOT_START';
  constructor(
    /** The program (`argv[0]`) that could not be started. */ readonly program: string,
    /** A shell's status for it: 127 not found, 126 not executable. */ readonly exitCode: 126 | 127,
  ) {
    super(exitCode === 127 ? 'No such file or directory' : 'Permission denied');
  }
}

/** A terminal size that is not two positive integers of at most 10000 (rows, cols); nothing was sent. */
export class InvalidTtySizeError extends ExecClientError {
  readonly code = 'INVALID_TTY_SIZE';
  constructor(
    /** The rows asked for. */
    readonly rows: number,
    /** The columns asked for. */
    readonly cols: number,
  ) {
    super(`invalid terminal size ${rows}x${cols}: rows and cols must be integers from 1 to 10000`);
  }
}

/**
 * Why a resize was not applied: the process has no sized terminal (`unsized`: started without a size,
 * without a pty, or where the executor cannot size one), it ended first (`ended`), or the resize helper
 * on the executor failed (`failed`, with its message).
 */
export type ResizeFailure = 'unsized' | 'ended' | 'failed';

/** `ExecProcess.resize` could not apply a size. The process itself is unaffected. */
export class ResizeFailedError extends ExecClientError {
  readonly code = 'RESIZE_FAILED';
  constructor(
    /** The process whose terminal was to be resized. */
    readonly processId: string,
    /** Why the size was not applied. */
    readonly reason: ResizeFailure,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot resize the terminal of process ${processId}: ${detail}`, options);
  }
}

/** What the executor answered a `process/write` that it did not take (its `WriteStatus` other than `accepted`). */
export type StdinRefusal = 'stdinClosed' | 'unknownProcess' | 'starting';

/**
 * `ExecProcess.write` was refused: the process takes no input (`stdinClosed`: started without
 * `pipeStdin` or a tty, or its input was ended), the executor no longer knows it (`unknownProcess`: it
 * closed), or it is not running yet (`starting`). The same code as the operator API's 409 (`STDIN_CLOSED`),
 * so a write refused in the library and one refused through `exec-rx/client` are told apart the same way.
 * Nothing of the refused chunk was written; the chunks of the same write before it were.
 */
export class StdinClosedError extends ExecClientError {
  readonly code = 'STDIN_CLOSED';
  constructor(
    /** The process written to. */ readonly processId: string,
    /** What the executor answered. */ readonly status: StdinRefusal,
  ) {
    super(`process ${processId} did not take the write: the executor answered ${status}`);
  }
}
