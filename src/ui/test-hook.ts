/**
 * The test hook of issue 23's contract: only when `sessionStorage['exec-rx-test'] === '1'` (specs set it
 * with an init script), `window.execRxTest` records the seq of every output event received, in order,
 * all output bytes received, the terminal, and the longest main-thread task seen. Without the flag
 * nothing is recorded.
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
}

declare global {
  interface Window {
    execRxTest?: ExecRxTest;
  }
}

/** Installs the hook when the flag is set; returns the recorder the page feeds. */
export function installTestHook(terminal: Terminal): OutputRecorder {
  if (sessionStorage.getItem('exec-rx-test') !== '1') return { record: () => undefined };
  const chunks: Uint8Array[] = [];
  const hook: ExecRxTest = {
    seqs: [],
    bytes: () => {
      const all = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
      let at = 0;
      for (const chunk of chunks) {
        all.set(chunk, at);
        at += chunk.length;
      }
      return all;
    },
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
      chunks.push(chunk.slice());
    },
  };
}
