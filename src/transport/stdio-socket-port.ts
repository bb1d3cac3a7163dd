import type { Readable, Writable } from 'node:stream';
import type { CloseInitiator } from '../errors';
import { TransportClosedError } from '../errors';
import type { SocketHandlers, SocketPort } from './socket-port';

/**
 * Wraps a stdio executor's pipes (`codex exec-server --listen stdio`) as a {@link SocketPort}:
 * newline-delimited JSON, one message per line; a trailing `\r` is stripped and blank lines skipped
 * (docs/protocol.md#stdio-mode). `close()` ends stdin, which makes the executor exit and kill its
 * processes. The port closes (`remote`) when stdout ends or errors. `pause()` stops reading the
 * child's stdout (its writes then block on the full pipe). Whoever spawned the child owns it.
 */
export function stdioSocketPort(input: Readable, output: Writable, label = 'stdio'): SocketPort {
  let handlers: SocketHandlers | undefined;
  let closed = false;
  let initiator: CloseInitiator = 'remote';
  let partial = '';
  let paused = false;

  const finish = (reason: string): void => {
    if (closed && handlers === undefined) return;
    const wasClosed = closed;
    closed = true;
    const current = handlers;
    handlers = undefined;
    if (current !== undefined) current.close(initiator, 1006, wasClosed && initiator === 'local' ? 'closed by client' : reason);
  };
  const onData = (data: Buffer | string): void => {
    const text = partial + (typeof data === 'string' ? data : data.toString('utf8'));
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const line = text.charCodeAt(nl - 1) === 13 ? text.slice(start, nl - 1) : text.slice(start, nl);
      start = nl + 1;
      if (line.trim() !== '') handlers?.message(line);
    }
    partial = text.slice(start);
  };
  const onEnd = (): void => finish('executor stdout ended');
  const onError = (error: Error): void => finish(`executor stdio failed: ${error.message}`);
  const onWriteError = (error: Error): void => finish(`executor stdin failed: ${error.message}`);
  input.setEncoding('utf8');
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
