/** Errors of a connection to an executor: the socket, the dial, the frames on it. */
import { ExecClientError } from './exec-client-error';

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
  readonly code: 'CONNECT_FAILED' | 'AUTHENTICATION_FAILED' | 'DIAL_HEADERS_FAILED' = 'CONNECT_FAILED';
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

/**
 * The `headers` function of a dial (`DialOptions.headers`) threw or rejected, so that attempt was not
 * made (no socket was opened). `cause` is what it threw; the message names neither the headers nor what
 * the function threw (it may carry a secret). On a first dial `EnvironmentManager.connect` rejects with
 * it; on a re-dial after a drop it counts as a failed dial: tried again with backoff until the recovery
 * deadline (the environment's `connectionState$` shows it meanwhile).
 */
export class DialHeadersError extends ConnectError {
  override readonly code = 'DIAL_HEADERS_FAILED';
  constructor(url: string, cause: unknown) {
    super(url, `the headers function failed (${cause instanceof Error ? cause.name : typeof cause}; see cause)`, undefined, { cause });
  }
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
