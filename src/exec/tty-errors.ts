import { ExecClientError } from '../errors';

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
