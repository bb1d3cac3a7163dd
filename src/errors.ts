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
  | 'RESIZE_FAILED'
  | OperatorApiErrorCode;

/**
 * The codes of the host's operator API (`exec-rx host`, `/api/v1`): its problem+json answers carry
 * these, or one of the library's codes above when a library call failed.
 */
export type OperatorApiErrorCode =
  | 'UNAUTHORIZED'
  | 'ROUTE_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'ENVIRONMENT_NOT_FOUND'
  | 'PROCESS_NOT_FOUND'
  | 'PROCESS_GONE'
  | 'INVALID_ID'
  | 'MALFORMED_JSON'
  | 'INVALID_REQUEST'
  | 'BODY_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'WRITE_ID_REUSED'
  | 'STDIN_CLOSED'
  | 'PROCESS_RUNNING'
  | 'TOO_MANY_REQUESTS'
  | 'TOO_MANY_STREAMS'
  | 'HOST_ERROR'
  | 'HOST_UNREACHABLE';

/** Base class of every error exec-rx raises. `name` is the subclass name. */
export abstract class ExecClientError extends Error {
  /** The stable code of the error's kind: switch on it (not on the class or the message). */
  abstract readonly code: ExecClientErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Who ended a transport: we did (`local`), or the peer or the network did (`remote`). */
export type CloseInitiator = 'local' | 'remote';

/**
 * The socket or stdio stream closed. Every close reads as code 1006 on the wire
 * (docs/protocol.md#framing-and-close-codes), so `initiator` records locally whether we closed it or the
 * peer vanished.
 */
export class TransportClosedError extends ExecClientError {
  readonly code = 'TRANSPORT_CLOSED';
  constructor(
    /** Who closed the transport: we did (`local`) or the peer or network did (`remote`). */ readonly initiator: CloseInitiator,
    /** The WebSocket close code seen (1006 for every close the executor makes). */ readonly closeCode: number,
    /** The close reason, `''` when none. */ readonly reason: string,
  ) {
    super(`exec-server transport disconnected${reason === '' ? '' : `: ${reason}`}`);
  }
}

/** Dialling a listening executor failed before the socket opened (refused, timed out, HTTP error). */
export class ConnectError extends ExecClientError {
  readonly code: 'CONNECT_FAILED' | 'AUTHENTICATION_FAILED' = 'CONNECT_FAILED';
  constructor(
    /** The url dialled. */ readonly url: string,
    detail: string,
    /** The HTTP status the upgrade was refused with, when it got that far. */ readonly httpStatus?: number,
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
    /** What failed to decode (a frame, a method's result, a notification's params). */ readonly what: string,
    /** One line per failing path: where, what was expected, what came. */ readonly details: readonly string[],
  ) {
    super(`failed to decode ${what}: ${details.join('; ')}`);
  }
}

/** The executor answered a request with a JSON-RPC error. */
export class RpcError extends ExecClientError {
  readonly code: 'RPC_ERROR' | 'NOT_FOUND' | 'SPAWN_FAILED' = 'RPC_ERROR';
  constructor(
    /** The method the executor rejected. */ readonly method: string,
    /** The JSON-RPC error code (-32600 invalid request, -32602 invalid params, -32603 internal, ...). */ readonly rpcCode: number,
    /** The executor's error message. */ readonly rpcMessage: string,
    /** The error's `data`, as sent (e.g. `{kind}` of a spawn failure). */ readonly data?: unknown,
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
  constructor(
    method: string,
    rpcCode: number,
    rpcMessage: string,
    /** Why the spawn failed (`data.kind`): `spawnNotFound`, `spawnPermissionDenied`, `spawnFailed`, ... */ readonly kind: string,
    data?: unknown,
  ) {
    super(method, rpcCode, rpcMessage, data);
  }
}

/** No reply arrived in time. */
export class RequestTimeoutError extends ExecClientError {
  readonly code = 'REQUEST_TIMEOUT';
  constructor(
    /** The method that timed out. */ readonly method: string,
    /** The timeout that passed, in ms. */ readonly afterMs: number,
  ) {
    super(`timed out waiting for exec-server \`${method}\` response after ${afterMs}ms`);
  }
}

/** The caller aborted the call (AbortSignal). */
export class AbortedError extends ExecClientError {
  readonly code = 'ABORTED';
  constructor(
    /** The method whose call was aborted. */ readonly method: string,
  ) {
    super(`exec-server \`${method}\` call was aborted`);
  }
}

/** A message we were about to send is over the executor's 16 MiB limit; it was not sent. */
export class FrameTooLargeError extends ExecClientError {
  readonly code = 'FRAME_TOO_LARGE';
  constructor(
    /** The method whose message was too large. */ readonly method: string,
    /** The message's size in bytes. */ readonly bytes: number,
    /** The limit it exceeds. */ readonly limitBytes: number,
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
  constructor(
    /** The recovering environment. */ readonly environmentId: string,
  ) {
    super(`exec-server environment is recovering`);
  }
}

/** Why a resume failed. */
export type ResumeFailure = 'timeout' | 'unknownSession' | 'rejected' | 'noReconnect';

/** The session could not be resumed after a disconnect; the environment has failed. */
export class ResumeFailedError extends ExecClientError {
  readonly code = 'RESUME_FAILED';
  constructor(
    /** Why: the deadline passed, the executor forgot the session, refused it, or no socket can come. */ readonly reason: ResumeFailure,
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
    /** The failed environment. */ readonly environmentId: string,
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
  ) {
    super(`file handle \`${handleId}\` was lost in a reconnect; a write handle cannot be reopened without truncating`);
  }
}

/** The manager, environment or connection was closed by its owner. */
export class ClosedError extends ExecClientError {
  readonly code = 'CLOSED';
}
