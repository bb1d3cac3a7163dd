/**
 * Forwarding this process's stdin to a command as it arrives, wherever the command runs (the one relay
 * `run` and `run --host` share, with our terminal's raw mode): each side gives only the sink (`run`: the
 * FIFO helper of `exec/stdin-fifo` or the command's pty, see `run/pty-sink`; `run --host`: the host's
 * stdin calls, see `remote/remote-supervisor`).
 */
import { spawnSync } from 'node:child_process';
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

/** How many terminals are in raw mode now (one in practice: ours). */
let rawTerminals = 0;

/**
 * The line end for our own messages on the terminal: `\r\n` while it is in raw mode (its output
 * processing is off, see {@link rawTerminal}), else `\n`.
 */
export function lineEnd(): string {
  return rawTerminals > 0 ? '\r\n' : '\n';
}

/** A terminal in raw mode, until `restore()`. */
export interface RawTerminal {
  /** Whether raw mode was entered (`input` is a terminal). */
  readonly raw: boolean;
  /** Leaves raw mode (the terminal as it was before); idempotent. */
  restore(): void;
}

/**
 * The terminal, if `input` is one, in raw mode until `restore()`, as `ssh -t` leaves it: Node's raw mode
 * keeps the output processing (OPOST/ONLCR), so the command's pty's `\r\n` would reach the screen (or
 * a `script(1)` log) as `\r\r\n`; it is turned off too (`stty -opost` on that terminal; without stty,
 * it stays on). Leaving raw mode restores the terminal's settings of before, output processing included.
 */
export function rawTerminal(input: Readable): RawTerminal {
  const tty = input as Readable & { isTTY?: boolean; fd?: number; setRawMode?: (raw: boolean) => unknown };
  if (tty.isTTY !== true || tty.setRawMode === undefined) return { raw: false, restore: () => undefined };
  const setRawMode = tty.setRawMode.bind(tty);
  setRawMode(true);
  if (typeof tty.fd === 'number') spawnSync('stty', ['-opost'], { stdio: [tty.fd, 'ignore', 'ignore'] });
  rawTerminals += 1;
  let restored = false;
  return {
    raw: true,
    restore: () => {
      if (restored) return;
      restored = true;
      rawTerminals -= 1;
      // libuv restores the settings it found when it first left the normal mode: OPOST with them.
      setRawMode(false);
    },
  };
}

/**
 * What the first read of a terminal just put in raw mode holds, minus the end-of-file mark a program
 * wrote while it was still canonical (`script(1)` does when its own stdin ends): Linux's line
 * discipline keeps that mark as a NUL byte and hands it out once canonical mode is off. The NUL is
 * never the user's (raw mode was not on when it was written); after a newline, or alone, it was an
 * end of file and input ends there (`end`).
 */
export function withoutCanonicalEof(first: Uint8Array): { readonly bytes: Uint8Array; readonly end: boolean } {
  if (first.byteLength === 0 || first[first.byteLength - 1] !== 0) return { bytes: first, end: false };
  const bytes = first.subarray(0, first.byteLength - 1);
  return { bytes, end: bytes.byteLength === 0 || bytes[bytes.byteLength - 1] === 0x0a };
}

/**
 * Reads `input` chunk by chunk (each write awaited: backpressure), then sends end-of-file. Never rejects.
 * With `terminal` in raw mode, a canonical end-of-file left in its first read is taken as one (see
 * {@link withoutCanonicalEof}), not forwarded as a NUL.
 */
export function relayStdin(input: Readable, sink: StdinSink, terminal?: RawTerminal): StdinRelay {
  let stopped = false;
  const pump = async (): Promise<void> => {
    try {
      let first = terminal?.raw === true;
      for await (const chunk of input as AsyncIterable<unknown>) {
        if (stopped) return;
        let bytes = chunk instanceof Uint8Array ? chunk : Buffer.from(String(chunk));
        let ended = false;
        if (first) {
          first = false;
          ({ bytes, end: ended } = withoutCanonicalEof(bytes));
        }
        if (bytes.byteLength > 0 && !(await sink.write(bytes))) return;
        if (ended) break;
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
