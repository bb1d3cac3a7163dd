import { Observable } from 'rxjs';
import type { CloseInitiator } from '../errors';
import { TransportClosedError } from '../errors';

/** Callbacks a {@link SocketPort} calls. */
export interface SocketHandlers {
  /**
   * One complete inbound message: a text frame (string) or a binary frame (bytes), or one stdio line.
   * `ascii` is `true` only when the port knows the text holds no character a valid multi-byte UTF-8
   * sequence made (a WebSocket text frame whose byte length equals its string length): decoding may
   * then skip its scans for non-ASCII characters. Absent means unknown.
   */
  readonly message: (frame: string | Uint8Array, ascii?: boolean) => void;
  /** The port closed; called once. `initiator` is `local` when we called `close()`. */
  readonly close: (initiator: CloseInitiator, closeCode: number, reason: string) => void;
  /** A keepalive pong arrived (WebSocket only). */
  readonly pong?: () => void;
}

/**
 * A bidirectional message port: a dialled or accepted WebSocket, or a stdio child. Core code sees only
 * this interface; `ws` and `child_process` stay in the adapters.
 */
export interface SocketPort {
  /** Where the port leads, for error messages (a url without its query, or `stdio`). Never a secret. */
  readonly label: string;
  /** Whether `send` can still deliver. */
  readonly isOpen: boolean;
  /** Sends one message. Throws a TransportClosedError when the port is closed. */
  send(frame: string): void;
  /** Closes the port (idempotent). The close handler then reports `local`. */
  close(reason?: string): void;
  /** Registers the handlers (one set per port) and returns the function that removes them. */
  listen(handlers: SocketHandlers): () => void;
  /** Sends a keepalive ping, when the port supports it. */
  readonly ping?: () => void;
  /**
   * Stops reading the peer (idempotent): no more bytes are taken from the socket or pipe, so the peer's
   * writes back up and block (nothing is lost; a message the port had already read may still be
   * handed over). Sending is unaffected. A port without it cannot stop reading: holding its connection
   * paused then only suspends the connection's timers.
   */
  readonly pause?: () => void;
  /** Reads the peer again after {@link pause} (idempotent; nothing when not paused). */
  readonly resume?: () => void;
}

/**
 * The port's inbound frames as an Observable (`onPong` hears keepalive pongs). Errors with a {@link TransportClosedError} when the port
 * closes, whoever closed it; never completes otherwise. Unsubscribing removes the listeners but does not
 * close the port: the owner of the port closes it.
 */
export const frames = (port: SocketPort, onPong?: () => void): Observable<string | Uint8Array> =>
  new Observable<string | Uint8Array>((subscriber) =>
    port.listen({
      message: (frame) => subscriber.next(frame),
      ...(onPong === undefined ? {} : { pong: onPong }),
      close: (initiator, code, reason) => subscriber.error(new TransportClosedError(initiator, code, reason)),
    }),
  );
