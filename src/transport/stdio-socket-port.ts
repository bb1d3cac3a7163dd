import { Buffer } from 'node:buffer';
import type { Readable, Writable } from 'node:stream';
import type { CloseInitiator } from '../errors';
import { TransportClosedError } from '../errors';
import { LineSplitter } from './line-splitter';
import type { SocketHandlers, SocketPort } from './socket-port';

/**
 * Wraps a stdio executor's pipes (`codex exec-server --listen stdio`) as a {@link SocketPort}:
 * newline-delimited JSON, one message per line; a trailing `\r` is stripped and blank lines skipped
 * (docs/protocol.md#stdio-mode). Lines are split on the bytes and each is decoded once (see
 * {@link LineSplitter}); a message whose bytes are all ASCII is handed over with `ascii` set. A last line
 * without its newline when stdout ends is dropped. `close()` ends stdin, which makes the executor exit
 * and kill its processes. The port closes (`remote`) when stdout ends or errors. `pause()` stops reading
 * the child's stdout (its writes then block on the full pipe). Whoever spawned the child owns it. The
 * port reads stdout as bytes: it must not have an encoding set (`setEncoding`); if it has, each string
 * chunk is encoded back to UTF-8 first.
 */
export function stdioSocketPort(input: Readable, output: Writable, label = 'stdio'): SocketPort {
  let handlers: SocketHandlers | undefined;
  let closed = false;
  let initiator: CloseInitiator = 'remote';
  let paused = false;
  const lines = new LineSplitter((line, ascii) => handlers?.message(line, ascii));

  const finish = (reason: string): void => {
    if (closed && handlers === undefined) return;
    const wasClosed = closed;
    closed = true;
    lines.reset();
    const current = handlers;
    handlers = undefined;
    if (current !== undefined) current.close(initiator, 1006, wasClosed && initiator === 'local' ? 'closed by client' : reason);
  };
  const onData = (data: Buffer | string): void => lines.push(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  const onEnd = (): void => finish('executor stdout ended');
  const onError = (error: Error): void => finish(`executor stdio failed: ${error.message}`);
  const onWriteError = (error: Error): void => finish(`executor stdin failed: ${error.message}`);
  output.on('error', onWriteError);

  return {
    label,
    get isOpen() {
      return !closed;
    },
    send(frame) {
      if (closed) throw new TransportClosedError(initiator, 1006, `${label} is closed`);
      output.write(`${frame}\n`);
    },
    close(reason) {
      if (closed) return;
      initiator = 'local';
      closed = true;
      output.end();
      queueMicrotask(() => finish(reason ?? 'closed by client'));
    },
    listen(next) {
      handlers = next;
      input.on('data', onData);
      input.on('end', onEnd);
      input.on('close', onEnd);
      input.on('error', onError);
      return () => {
        handlers = undefined;
        input.off('data', onData);
        input.off('end', onEnd);
        input.off('close', onEnd);
        input.off('error', onError);
      };
    },
    pause: () => {
      if (paused || closed) return;
      paused = true;
      input.pause();
    },
    resume: () => {
      if (!paused) return;
      paused = false;
      input.resume();
    },
  };
}
