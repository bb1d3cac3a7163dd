/**
 * Where a subscriber's events come from, in the order the event stream (`./process-event-stream`) tries
 * them:
 *
 * 1. the process's output history (the exec `OutputHistoryReader` port): every event from its
 *    `historyStartSeq` on, then live;
 * 2. only for the seqs before that: the executor's own retained window (`process/read`), which
 *    `./window-fill` turns into the events to send and a `truncated` marker for what neither holds.
 *
 * The history is the log store's (a live reader, `store/log-store.ts`); a log read at the reader's own
 * pace (a disk log) holds all of a process's output and is streamed without these sources
 * (`./log-event-stream`). {@link executorWindowOf} makes the second source of a live process.
 */
import type { ExecProcess } from '../../exec/exec-process';
import type { OutputHistoryReader } from '../../exec/output-history';
import type { ReadResponse } from '../../wire/process';

/** The second source: the executor's retained window, asked only for what the history no longer holds. */
export interface ExecutorWindow {
  /**
   * The executor's retained output after `afterSeq` (`process/read` with no wait). Resolves with its
   * answer (once the environment failed, with a synthesized one whose `failure` names the error);
   * rejects with the read's error otherwise.
   */
  read(afterSeq: number): Promise<ReadResponse>;
  /**
   * The close's seq when it lies before `until` although the history does not hold it (a closed
   * process whose history holds nothing); the window never carries the close. Else `undefined`.
   */
  closeSeqBefore(until: number): number | undefined;
}

/** The two sources of one subscriber's events (see the file comment). */
export interface EventSources {
  /** First: the process's output history, replayed from a seq, then live. */
  readonly history: OutputHistoryReader;
  /** Second: the executor's window, for the seqs before `history.historyStartSeq`. */
  readonly window: ExecutorWindow;
}

/** A live process's executor window: `process/read` through the process, and where its close lies. */
export function executorWindowOf(process: ExecProcess): ExecutorWindow {
  return {
    read: (afterSeq) => process.read(afterSeq, null, 0),
    closeSeqBefore: (until) => (process.state === 'closed' && until > process.lastPublishedSeq ? process.lastPublishedSeq : undefined),
  };
}
