/**
 * The port of a process's output history: where `ExecProcess` puts the events it publishes and where
 * its readers (its own views, a late subscriber, the host's event stream) replay them from.
 *
 * Whoever starts the process supplies the history through a {@link HistoryFactory}
 * (`ProcessStreamOptions.outputHistory`, `EnvironmentManagerOptions.outputHistory`); the library's
 * default is `EventHistory`, bounded and in memory. Storage code (a disk log, a database) lives with the
 * code that supplies it, never in `exec/`: the layer rules keep `fs` and database clients out of here.
 */
import type { Observable } from 'rxjs';
import type { SequencedEvent } from '../wire/process-event';
import type { FailedEvent, ProcessEvent, TruncatedEvent } from './process-event';

/**
 * What the owner appends to a history: published events in seq order, and at most one terminal
 * failure. A `truncated` input says the seqs before its `nextSeq` will never come (an adopted process
 * whose executor no longer had them): the next event appended has seq `nextSeq`.
 */
export type HistoryInput = SequencedEvent | FailedEvent | TruncatedEvent;

/**
 * The read side of a process's output history: what a reader resuming from a seq needs. `ExecProcess`
 * offers it too (it reads through its history), and that is what the host's event stream reads.
 */
export interface OutputHistoryReader {
  /**
   * The oldest seq a replay still gives: events before it are no longer held (the executor's own
   * window may still have their output). When nothing is held, the seq of the next event to come.
   * Never decreases.
   */
  readonly historyStartSeq: number;

  /**
   * The events strictly after `afterSeq` (0: every event), per subscriber: first ONE `truncated` marker
   * when the history no longer reaches `afterSeq + 1` (its `nextSeq` is the seq of the first event
   * that follows; nothing after it is missing), then the events held, then live ones as they are
   * appended, in seq order with no gap and no duplicate between replay and live. An `afterSeq` beyond
   * the last event skips live events up to it.
   *
   * Completes after delivering `closed`. A failure is delivered as a `failed` value, then it completes:
   * it never errors. A subscriber arriving after the end gets what is held after `afterSeq` (and the
   * `failed` value) and completes at once. Unsubscribing removes only that subscriber; what is held
   * stays until the owner calls `release()`.
   *
   * The in-memory `EventHistory` delivers the replay synchronously inside `subscribe`; a reader that
   * pauses a replay at a high water mark (the host's event stream) relies on that.
   */
  eventsAfter$(afterSeq: number): Observable<ProcessEvent>;
}

/**
 * One process's output history. Its owner (the process: its inbox appends, `ExecProcess.release()`
 * releases) is its only writer; readers only subscribe to {@link OutputHistoryReader.eventsAfter$}. It
 * holds no timers: everything happens on the caller's turn.
 */
export interface OutputHistory extends OutputHistoryReader {
  /**
   * Records one published event and delivers it to the live subscribers before returning. Events come
   * in strictly increasing, contiguous seq order (the process's reorder buffer sees to it), then at
   * most one `closed` or `failed`, which ends the history and completes every subscriber; appends after
   * it are ignored. An append made from inside a subscriber's callback is delivered after the current
   * one, so every subscriber sees the same order. Never throws: every output event comes through
   * here (docs/performance.md) (what storage cannot keep is dropped, and a later reader gets a `truncated` marker for it).
   */
  append(event: HistoryInput): void;

  /**
   * Resolves once the history is kept where a host restarted after the start can find it (a log on
   * disk: its metadata written, naming the process and its command line). `ExecBackend` awaits it before
   * `process/start` is sent, so no process runs that a crash could leave unknown. Never rejects (what
   * storage cannot keep, its owner reports). Absent: nothing to wait for (in memory).
   */
  readonly ready?: () => Promise<void>;

  /** Events held for replay (bookkeeping, `ExecProcess.retained`). */
  readonly retainedEvents: number;

  /** Output payload bytes held for replay. */
  readonly retainedBytes: number;

  /** Live subscribers (those past their replay that have not unsubscribed). */
  readonly subscriberCount: number;

  /**
   * Drops what is held: nobody wants the replay any more. Called by the owner only, through
   * `ExecProcess.release()` (by the user, or by the environment's process list when the ended process
   * leaves it). Live subscribers keep receiving until the end; later subscribers get only a `truncated`
   * marker (and completion, once ended); later events are not held. Idempotent.
   */
  release(): void;

  /**
   * The process never ran: its start was refused before it was sent (the connection was gone, the
   * environment failed, the call was aborted) or by the executor. A store keeps nothing of it (its
   * metadata goes: not listed, not taken back); otherwise as {@link release}. Called by the owner only,
   * instead of `release()`, through `ExecBackend.start`. Absent: `release()` is called instead.
   * Idempotent.
   */
  discard?(): void;
}

/** How a listed process was started, as a history factory is told: what `Environment.processes$` lists it with. */
export interface HistoryLaunch {
  /** Its command line (for a process with a stdin FIFO or a sized tty: the caller's, not the wrapper's). */
  readonly argv: readonly string[];
  /** Whether it runs on a pty. */
  readonly tty: boolean;
}

/**
 * Makes the output history of one process. Called once per process with its id, when `ExecBackend.start`
 * builds the process (before `process/start` is sent: a throw rejects the start, and nothing is sent), or
 * when `EnvironmentManager.adoptAcceptedWebsocket` takes one back. `launch` says how a listed process was
 * started (a store can record it with the first bytes it keeps); it is absent for the helpers a start runs
 * (the FIFO feeder, a sized tty's wrapper), which are never listed. The history it returns belongs to that
 * process, which appends to it and releases it.
 */
export type HistoryFactory = (processId: string, launch?: HistoryLaunch) => OutputHistory;
