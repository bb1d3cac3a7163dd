/**
 * Forwarding this process's stdin to a command as it arrives, wherever the command runs: each side gives
 * the sink (`run`: the FIFO helper of `exec/stdin-fifo` or the command's pty, see `run/stdin-relay`;
 * `run --host`: the host's stdin calls, see `remote/remote-supervisor`).
 */
import type { Readable } from 'node:stream';

/** Where stdin goes. `write` resolves `false` when the receiver is gone (stop reading). */
export interface StdinSink {
  write(chunk: Uint8Array): Promise<boolean>;
  end(): Promise<void>;
  dispose(): Promise<void>;
}

/** A running relay. */
export interface StdinRelay {
  /** Resolves when stdin ended (and end-of-file was sent), the sink went away, or `stop()` was called. */
  readonly done: Promise<void>;
  /** Stops reading stdin (destroys it, so it keeps nothing alive); idempotent. */
  stop(): void;
}

/** The terminal, if `input` is one, in raw mode until `restore()`. */
export function rawTerminal(input: Readable): { restore(): void } {
  const tty = input as Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  if (tty.isTTY !== true || tty.setRawMode === undefined) return { restore: () => undefined };
  const setRawMode = tty.setRawMode.bind(tty);
  setRawMode(true);
  let restored = false;
  return {
    restore: () => {
      if (restored) return;
      restored = true;
      setRawMode(false);
    },
  };
}

/** Reads `input` chunk by chunk (each write awaited: backpressure), then sends end-of-file. Never rejects. */
export function relayStdin(input: Readable, sink: StdinSink): StdinRelay {
  let stopped = false;
  const pump = async (): Promise<void> => {
    try {
      for await (const chunk of input as AsyncIterable<unknown>) {
        if (stopped) return;
        const bytes = chunk instanceof Uint8Array ? chunk : Buffer.from(String(chunk));
        if (!(await sink.write(bytes))) return;
      }
      if (!stopped) await sink.end();
    } catch {
      // stdin failed or was destroyed by stop(): nothing more to forward
    }
  };
  return {
    done: pump(),
    stop: () => {
      if (stopped) return;
      stopped = true;
      input.destroy();
    },
  };
}
