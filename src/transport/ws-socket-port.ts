import { Buffer } from 'node:buffer';
import type { RawData, WebSocket } from 'ws';
import type { CloseInitiator } from '../errors';
import { TransportClosedError } from '../errors';
import type { SocketHandlers, SocketPort } from './socket-port';

/** Options of {@link wsSocketPort}. */
export interface WsSocketPortOptions {
  /** What error messages call this socket (a url without its query string, or `accepted`). @default 'websocket' */
  readonly label?: string;
  /**
   * Send an unsolicited pong after each batch of received frames (one event-loop turn), so the kernel
   * acknowledges at once and a listening executor's Nagle-held small frames go out without the ~40 ms
   * delayed-ACK stall (docs/protocol.md#listen-mode-websocket; RFC 6455 5.5.3 allows unsolicited pongs).
   * @default false (the dialler turns it on for sockets it dials)
   */
  readonly ackPong?: boolean;
}

const OPEN = 1;

/**
 * Wraps a `ws` WebSocket (dialled, or accepted with `handleUpgrade`) as a {@link SocketPort}. The socket
 * must already be open. The port owns the socket from now on: `close()` terminates it, and so does the
 * owner of the port when it is done. Text and binary frames are both accepted.
 */
export function wsSocketPort(socket: WebSocket, options: WsSocketPortOptions = {}): SocketPort {
  let initiator: CloseInitiator = 'remote';
  let handlers: SocketHandlers | undefined;
  let pongScheduled: NodeJS.Immediate | undefined;
  let closed = socket.readyState !== OPEN;
  const label = options.label ?? 'websocket';

  const sendAckPong = (): void => {
    pongScheduled = undefined;
    if (socket.readyState === OPEN) socket.pong();
  };
  const onMessage = (data: RawData, isBinary: boolean): void => {
    if (options.ackPong === true && pongScheduled === undefined) pongScheduled = setImmediate(sendAckPong);
    if (handlers === undefined) return;
    if (isBinary) return handlers.message(toBytes(data));
    const text = data.toString();
    // UTF-8 takes more bytes than UTF-16 units for every character a valid multi-byte sequence makes.
    handlers.message(text, Buffer.isBuffer(data) && data.length === text.length);
  };
  const onClose = (code: number, reason: Buffer): void => {
    closed = true;
    if (pongScheduled !== undefined) clearImmediate(pongScheduled);
    pongScheduled = undefined;
    handlers?.close(initiator, code, initiator === 'local' ? `closed by client` : reason.toString() || `connection to ${label} lost`);
  };
  const onPong = (): void => handlers?.pong?.();
  const onError = (): void => {
    // ws emits 'close' after 'error'; the close handler reports it. Listening here keeps the error from
    // being thrown as an unhandled 'error' event.
  };
  socket.on('error', onError);

  return {
    label,
    get isOpen() {
      return !closed && socket.readyState === OPEN;
    },
    send(frame) {
      if (closed || socket.readyState !== OPEN) throw new TransportClosedError(initiator, 1006, `socket to ${label} is closed`);
      socket.send(frame);
    },
    close() {
      if (closed) return;
      initiator = 'local';
      closed = true;
      // terminate(): the executor never completes a closing handshake (every close reads as 1006), so a
      // graceful close() would hold the socket for ws's 30 s closing timeout.
      socket.terminate();
    },
    listen(next) {
      handlers = next;
      socket.on('message', onMessage);
      socket.on('close', onClose);
      socket.on('pong', onPong);
      if (socket.readyState === 3 /* CLOSED */) queueMicrotask(() => onClose(1006, Buffer.alloc(0)));
      return () => {
        handlers = undefined;
        socket.off('message', onMessage);
        socket.off('close', onClose);
        socket.off('pong', onPong);
      };
    },
    ping: () => {
      if (socket.readyState === OPEN) socket.ping();
    },
    // ws stops reading the TCP socket; the executor's writes back up (docs/protocol.md#flow-control).
    pause: () => socket.pause(),
    resume: () => {
      if (socket.isPaused) socket.resume();
    },
  };
}

const toBytes = (data: RawData): Uint8Array =>
  Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data;
