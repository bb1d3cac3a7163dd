/**
 * Every error exec-rx raises is an {@link ExecClientError} with a stable string `code`.
 * Messages carry their context (method, url, timeout, process id); secrets never appear in them.
 */

/** The closed set of error codes. Switch on `error.code`; the set only grows on purpose. */
export type ExecClientErrorCode =
  | 'TRANSPORT_CLOSED'
  | 'CONNECT_FAILED'
  | 'AUTHENTICATION_FAILED'
  | 'DECODE_FAILED'
  | 'RPC_ERROR'
  | 'NOT_FOUND'
  | 'SPAWN_FAILED'
  | 'REQUEST_TIMEOUT'
  | 'ABORTED'
  | 'FRAME_TOO_LARGE'
  | 'PROTOCOL_ERROR'
  | 'ENVIRONMENT_RECOVERING'
  | 'RESUME_FAILED'
  | 'ENVIRONMENT_FAILED'
  | 'REPLACEMENT_REJECTED'
  | 'PROCESS_FAILED'
  | 'PROCESS_GAP'
  | 'REORDER_OVERFLOW'
  | 'CONSUMER_OVERFLOW'
  | 'HANDLE_LOST'
  | 'CLOSED'
  | 'INVALID_TTY_SIZE'
  | 'RESIZE_FAILED';

/** Base class of every error exec-rx raises. `name` is the subclass name. */
export abstract class ExecClientError extends Error {
  abstract readonly code: ExecClientErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Who ended a transport: we did (`local`), or the peer or the network did (`remote`). */
export type CloseInitiator = 'local' | 'remote';

/**
 * The socket or stdio stream closed. Every close reads as code 1006 on the wire (PROTOCOL.md 2.3),
 * so `initiator` records locally whether we closed it or the peer vanished.
 */
export class TransportClosedError extends ExecClientError {
  readonly code = 'TRANSPORT_CLOSED';
  constructor(
    readonly initiator: CloseInitiator,
    readonly closeCode: number,
    readonly reason: string,
  ) {
    super(`exec-server transport disconnected${reason === '' ? '' : `: ${reason}`}`);
  }
}

/** Dialling a listening executor failed before the socket opened (refused, timed out, HTTP error). */
export class ConnectError extends ExecClientError {
  readonly code: 'CONNECT_FAILED' | 'AUTHENTICATION_FAILED' = 'CONNECT_FAILED';
  constructor(
    readonly url: string,
    detail: string,
    readonly httpStatus?: number,
    options?: { cause?: unknown },
  ) {
    super(`failed to connect to exec-server at ${url}: ${detail}`, options);
  }
}

/** The executor refused the upgrade with 401 (missing or wrong bearer token). */
export class AuthenticationError extends ConnectError {
  override readonly code = 'AUTHENTICATION_FAILED';
}

/** A frame, a result or a notification did not match its codec. `details` name the failing paths. */
export class DecodeError extends ExecClientError {
  readonly code = 'DECODE_FAILED';
  constructor(
    readonly what: string,
    readonly details: readonly string[],
  ) {
    super(`failed to decode ${what}: ${details.join('; ')}`);
  }
}

/** The executor answered a request with a JSON-RPC error. */
export class RpcError extends ExecClientError {
  readonly code: 'RPC_ERROR' | 'NOT_FOUND' | 'SPAWN_FAILED' = 'RPC_ERROR';
  constructor(
    readonly method: string,
    readonly rpcCode: number,
    readonly rpcMessage: string,
    readonly data?: unknown,
  ) {
    super(`exec-server rejected ${method} (${rpcCode}): ${rpcMessage}`);
  }
}

/** A filesystem path or file handle does not exist (-32004). */
export class NotFoundError extends RpcError {
  override readonly code = 'NOT_FOUND';
}

/** `process/start` could not spawn the program (-32603 with `data.kind`, e.g. `spawnNotFound`). */
export class SpawnError extends RpcError {
  override readonly code = 'SPAWN_FAILED';
  constructor(method: string, rpcCode: number, rpcMessage: string, readonly kind: string, data?: unknown) {
    super(method, rpcCode, rpcMessage, data);
  }
}

/** No reply arrived in time. */
export class RequestTimeoutError extends ExecClientError {
  readonly code = 'REQUEST_TIMEOUT';
  constructor(
    readonly method: string,
    readonly afterMs: number,
  ) {
    super(`timed out waiting for exec-server \`${method}\` response after ${afterMs}ms`);
  }
}

/** The caller aborted the call (AbortSignal). */
export class AbortedError extends ExecClientError {
  readonly code = 'ABORTED';
  constructor(readonly method: string) {
    super(`exec-server \`${method}\` call was aborted`);
  }
}

/** A message we were about to send is over the executor's 16 MiB limit; it was not sent. */
export class FrameTooLargeError extends ExecClientError {
  readonly code = 'FRAME_TOO_LARGE';
  constructor(
    readonly method: string,
    readonly bytes: number,
    readonly limitBytes: number,
  ) {
    super(`exec-server \`${method}\` message of ${bytes} bytes exceeds the ${limitBytes}-byte frame limit`);
  }
}

/** The peer broke the protocol (an unexpected session id on resume, a duplicate server request id, ...). */
export class ProtocolError extends ExecClientError {
  readonly code = 'PROTOCOL_ERROR';
}

/** `environment/status` while the environment is recovering: it fails fast, it does not wait. */
export class EnvironmentRecoveringError extends ExecClientError {
  readonly code = 'ENVIRONMENT_RECOVERING';
  constructor(readonly environmentId: string) {
    super(`exec-server environment is recovering`);
  }
}

/** Why a resume failed. */
export type ResumeFailure = 'timeout' | 'unknownSession' | 'rejected' | 'noReconnect';

/** The session could not be resumed after a disconnect; the environment has failed. */
export class ResumeFailedError extends ExecClientError {
  readonly code = 'RESUME_FAILED';
  constructor(
    readonly reason: ResumeFailure,
    disconnect: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${disconnect}; failed to resume exec-server session: ${detail}`, options);
  }
}

/** Every call on a failed environment (or a closed manager) fails with this; `cause` is the failure. */
export class EnvironmentFailedError extends ExecClientError {
  readonly code = 'ENVIRONMENT_FAILED';
  constructor(
    readonly environmentId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A socket handed to the manager was refused (an initial resume id, an overlapping replacement, ...). */
export class ReplacementRejectedError extends ExecClientError {
  readonly code = 'REPLACEMENT_REJECTED';
}

/** A process failed: its stream ended without `closed` (recovery error, environment failure, ...). */
export class ProcessFailedError extends ExecClientError {
  readonly code = 'PROCESS_FAILED';
  constructor(
    readonly processId: string,
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
    readonly processId: string,
    readonly missingFromSeq: number,
    readonly missingToSeq: number,
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
    readonly processId: string,
    detail: string,
  ) {
    super(`process ${processId} event reorder buffer ${detail}`);
  }
}

/** A bounded consumer (async iterator) fell behind and events had to be dropped. */
export class ConsumerOverflowError extends ExecClientError {
  readonly code = 'CONSUMER_OVERFLOW';
  constructor(
    readonly missedEvents: number,
    readonly bufferSize: number,
  ) {
    super(`consumer fell behind: buffer of ${bufferSize} events overflowed, ${missedEvents} event(s) missed`);
  }
}

/** A file handle did not survive a reconnect and could not be reopened (a `replace` handle). */
export class HandleLostError extends ExecClientError {
  readonly code = 'HANDLE_LOST';
  constructor(readonly handleId: string) {
    super(`file handle \`${handleId}\` was lost in a reconnect; a write handle cannot be reopened without truncating`);
  }
}

/** The manager, environment or connection was closed by its owner. */
export class ClosedError extends ExecClientError {
  readonly code = 'CLOSED';
}

/** A terminal size that is not two positive integers of at most 10000 (rows, cols); nothing was sent. */
export class InvalidTtySizeError extends ExecClientError {
  readonly code = 'INVALID_TTY_SIZE';
  constructor(
    readonly rows: number,
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
    readonly processId: string,
    readonly reason: ResizeFailure,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot resize the terminal of process ${processId}: ${detail}`, options);
  }
}
