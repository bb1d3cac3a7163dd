/**
 * The test hook of issue 23's contract: only when `sessionStorage['exec-rx-test'] === '1'` (specs set it
 * with an init script), `window.execRxTest` records the seq of every output event received, in order,
 * all output bytes received, the terminal, and the longest main-thread task seen. Without the flag
 * nothing is recorded.
 *
 * What it records is the view's: when the view starts over (another process selected, none, or the same
 * one asked again from its start because Timestamps was switched), `seqs` and `bytes()` start over too,
 * so a seq is never recorded twice for one view.
 */
import type { Terminal } from '@xterm/xterm';

/** What `window.execRxTest` holds. */
export interface ExecRxTest {
  readonly seqs: number[];
  bytes(): Uint8Array;
  terminal: Terminal;
  longestTaskMs: number;
}

/** Records output for specs; a no-op without the flag. */
export interface OutputRecorder {
  record(seq: number, chunk: Uint8Array): void;
  /** The view starts over: forget what was recorded. */
  reset(): void;
}

/** The recorder without the flag. */
export const NO_RECORDER: OutputRecorder = { record: () => undefined, reset: () => undefined };

/**
 * Bytes appended to one buffer that doubles when full: `bytes()` is a view of what was received (no
 * concatenation per call, so a spec that polls it costs the page nothing); the bytes a view shows never
 * change, a later append that needs room moves to a new buffer.
 */
class ByteLog {
  private buffer = new Uint8Array(64 * 1024);
  private length = 0;

  append(chunk: Uint8Array): void {
    if (this.length + chunk.length > this.buffer.length) {
      const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + chunk.length));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.buffer.set(chunk, this.length);
    this.length += chunk.length;
  }

  view(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  clear(): void {
    this.buffer = new Uint8Array(64 * 1024);
    this.length = 0;
  }
}

declare global {
  interface Window {
    execRxTest?: ExecRxTest;
  }
}

/** Installs the hook when the flag is set; returns the recorder the page feeds. */
export function installTestHook(terminal: Terminal): OutputRecorder {
  if (sessionStorage.getItem('exec-rx-test') !== '1') return NO_RECORDER;
  const log = new ByteLog();
  const hook: ExecRxTest = {
    seqs: [],
    bytes: () => log.view(),
    terminal,
    longestTaskMs: 0,
  };
  if (typeof PerformanceObserver !== 'undefined' && PerformanceObserver.supportedEntryTypes.includes('longtask')) {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) hook.longestTaskMs = Math.max(hook.longestTaskMs, entry.duration);
    }).observe({ type: 'longtask', buffered: true });
  }
  window.execRxTest = hook;
  return {
    record: (seq, chunk) => {
      hook.seqs.push(seq);
      log.append(chunk);
    },
    reset: () => {
      hook.seqs.length = 0;
      log.clear();
    },
  };
}
