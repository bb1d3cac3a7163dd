/**
 * The port of a host's output logs: where every process's output goes as it arrives, where every reader
 * of it (an event stream, `/log`) reads from, and what a restarted host takes its processes back from.
 * The host holds one {@link LogStore} and nothing else of its logs; `startHostServer` and the command line
 * choose the adapter: the disk (`store/disk`, a data dir), memory (`store/memory`, `--data-dir none`).
 *
 * The rules every adapter keeps (the contract suite, `spec/store/log-store.contract.ts`, is their
 * definition): a process's events are read back in seq order, with no gap and no duplicate between what
 * a reader replays and what it gets live; what an adapter cannot give is one `truncated` marker with its
 * exact range and reason, never a silent hole; bounds are kept; a writer whose epoch is stale is
 * refused. What one adapter can and another cannot is a capability ({@link LogStoreCapabilities}), named
 * by each adapter and checked by the suite.
 */
import type { Observable } from 'rxjs';
import type { OutputLogError, StaleEpochError } from '../errors';
import type { HistoryFactory, OutputHistoryReader } from '../exec/output-history';
import type { LogRead } from './log-events';
import type { ProcessKey, ProcessLaunch, ProcessMeta } from './process-meta';

/** What a log store reports of its own failures: a log the store could not write, a stale writer refused. */
export type LogStoreFailure = OutputLogError | StaleEpochError;

/**
 * A process's log read at the reader's own pace: everything the log holds, by seq, however far behind the
 * reader is; the executor is never slowed for it. A disk log (and later a shared one) reads so.
 */
export interface PacedLogReader {
  /** How this log is read: at the reader's own pace. */
  readonly pace: 'own';
  /** The process the log belongs to. */
  readonly processId: string;
  /** The last seq the log holds or covers now (0 before the first). */
  readonly lastSeq: number;
  /**
   * The events after `afterSeq`, up to about `maxBytes` of output (at least one event when any is held),
   * with `truncated` markers where the log cannot give a range; see {@link LogRead}. Rejects with
   * OutputLogReadError when the log cannot be read (damage is a marker, not an error).
   */
  read(afterSeq: number, maxBytes: number): Promise<LogRead>;
  /** {@link read} done at once when it needs no I/O; undefined when it does (then call `read`). Never throws. */
  readNow(afterSeq: number, maxBytes: number): LogRead | undefined;
  /** Resolves once the log holds a seq after `afterSeq`, or takes no more appends. Never rejects. */
  waitFor(afterSeq: number): Promise<void>;
}

/**
 * A process's log as a bounded history in memory: replayed from a seq, then live, in one subscription
 * (`history.eventsAfter$`). What the bound dropped is one `truncated` marker; a reader that cannot keep
 * up is the host's to cut (its event stream ends at its send buffer's bound, and the client resumes by
 * seq), because holding the history for it would hold the executor. Memory reads so.
 */
export interface LiveLogReader {
  /** How this log is read: live, within the history's bound. */
  readonly pace: 'live';
  /** The process's history: replay then live, synchronously inside `subscribe`. */
  readonly history: OutputHistoryReader;
}

/** A process's log as its readers reach it (see each kind). */
export type ProcessLogReader = PacedLogReader | LiveLogReader;

/** A process whose log is too far behind the disk (or a shared store): the host pauses its executor. */
export interface LogPressure {
  /** The process. */
  readonly key: ProcessKey;
  /** True: pause the producer (its executor's socket); false: resume it. */
  readonly behind: boolean;
  /** Bytes taken and not yet written, when it changed. */
  readonly backlogBytes: number;
}

/** What the host's metrics read of a store that keeps files: read when scraped. */
export interface LogStoreFigures {
  /** Bytes of every log's files. */
  readonly diskBytes: number;
  /** Segment files of every open log. */
  readonly segments: number;
  /** Whole logs removed for the total bound or retention, and segments dropped for a quota (ever). */
  readonly evictions: Readonly<Record<'total' | 'retention' | 'quota', number>>;
}

/**
 * What an adapter can do, declared by it, so that the contract suite checks each rule where it holds and
 * says where it does not (never a silent skip).
 */
export interface LogStoreCapabilities {
  /** Readers read at their own pace ({@link PacedLogReader}) without holding the executor; else they are {@link LiveLogReader}s. */
  readonly ownPace: boolean;
  /** What it holds outlives the process that holds it (a restarted host reads it and takes processes back). */
  readonly durable: boolean;
  /** Its bound keeps a process's head (its first output) and drops from the middle; else it drops the oldest. */
  readonly keepsHead: boolean;
  /** A write it could not make (a full disk) fails that log alone, with LOG_WRITE_FAILED. */
  readonly writeFailures: boolean;
  /** It reports {@link LogStoreFigures} (files, segments, evictions) to the metrics. */
  readonly figures: boolean;
  /** A process that failed or was released stays listed, with its state, until the bounds remove it; else the store lets go of it then. */
  readonly listsEnded: boolean;
}

/** How a history factory of {@link LogStore.histories} writes. */
export interface HistoriesOptions {
  /**
   * The writer's epoch for the environment (`StateStore.claim`): a log written at an older epoch than the
   * environment's newest takes no more appends, and the store reports a StaleEpochError on `failures$`.
   */
  readonly epoch: number;
  /** The writer's name (the host's owner name): a store that keeps who wrote each entry (Redis) stamps it. @default '' */
  readonly writer?: string;
}

/**
 * A host's output logs (see the module's doc). Reads that may need a shared store are asynchronous;
 * `failures$`, `syncs$` and `pressure$` are hot, complete on `close()` and never error. The host owns the
 * store it is given; `close()` is the last call.
 */
export interface LogStore {
  /** What this adapter can do (see {@link LogStoreCapabilities}). */
  readonly capabilities: LogStoreCapabilities;

  /**
   * The history factory of one environment's processes, writing at `options.epoch`: each process gets a
   * new log (state `running`, its launch recorded), or, for a process taken back with {@link adopt}, its
   * log of before, taking appends after its last seq. Exit, close and failure are recorded as they are
   * appended; the history's release marks the log released. The factory throws ClosedError (the start is
   * refused, nothing is sent) once the store is closed.
   */
  histories(environmentId: string, options: HistoriesOptions): HistoryFactory;

  /**
   * The log of a process the store holds, for reading from any seq; undefined when it holds none. A paced
   * reader is the same object while the log is the same one (after a restart took the process back,
   * another). Rejects with OutputLogReadError when the log cannot be opened.
   */
  openReader(key: ProcessKey): Promise<ProcessLogReader | undefined>;

  /** What the store knows of every process it holds: oldest first, then by environment and process id. */
  list(): Promise<readonly ProcessMeta[]>;

  /** What the store knows of one process, if it holds it. */
  meta(key: ProcessKey): Promise<ProcessMeta | undefined>;

  /** Records how a process was started, when it was not known as its log was made. Never rejects (a failure goes to `failures$`). */
  describe(key: ProcessKey, launch: ProcessLaunch): Promise<void>;

  /** Records who started a process through the operator API (a token's name, never the token). Never rejects. */
  noteStartedBy(key: ProcessKey, startedBy: string): Promise<void>;

  /** The process's history was released: its log takes no more appends and is the first the bounds remove. Never rejects. */
  release(key: ProcessKey): Promise<void>;

  /** Removes a process's log and what the store knows of it (an eviction). Never rejects (a failure goes to `failures$`). */
  remove(key: ProcessKey): Promise<void>;

  /** Applies retention and the total bound now (the store also does on its own). Resolves when done; never rejects. */
  enforce(): Promise<void>;

  /**
   * The processes of `environmentId` a restarted host may take back: found `unknown` (running when the host
   * stopped), or taken back (`adopt`) and not yet continued by a history (the take-back failed: the next
   * one adopts them again); not released.
   */
  adoptable(environmentId: string): Promise<readonly ProcessMeta[]>;

  /**
   * Takes back the log of a process of before that its executor still runs, at `epoch`: resolves with
   * its last seq (the executor is read after it), and the next {@link histories} of its environment
   * continues that log; the process is `running` again. Undefined when the store does not hold it.
   * Rejects with OutputLogReadError when it cannot be read, ClosedError once the store is closed.
   */
  adopt(key: ProcessKey, epoch: number): Promise<number | undefined>;

  /** A process of before that could not be taken back: state `lost`, with why; its log stays readable and takes no more appends. Never rejects. */
  markLost(key: ProcessKey, reason: string): Promise<void>;

  /** The process's stream failed on the host's side: state `failed`, its log takes no more appends. Never rejects. */
  markFailed(key: ProcessKey): Promise<void>;

  /** Resolves once what the store records of `key` so far is kept (a host restarted after it finds the process). Never rejects. */
  metaWritten(key: ProcessKey): Promise<void>;

  /** Each failure of a log or of the store's own records, and each stale writer refused (once per log). */
  readonly failures$: Observable<LogStoreFailure>;

  /** Each sync of a log's file, as its wall-clock ms (the host's metrics); nothing from a store without files. */
  readonly syncs$: Observable<number>;

  /** Each change of a log's backpressure; a log that ends while behind emits `behind: false`. */
  readonly pressure$: Observable<LogPressure>;

  /** What the metrics read (see {@link LogStoreFigures}); undefined for a store that keeps no files. */
  readonly figures: LogStoreFigures | undefined;

  /** Why the store cannot take writes right now (`data dir not writable`), or undefined when it can. Never rejects. */
  unready(): Promise<string | undefined>;

  /** Writes (and syncs) what every log took so far: a host that stops, before it lets its executors go. Never rejects. */
  flush(): Promise<void>;

  /** Stops the store's timers, closes every log (written and synced), completes its streams. Idempotent; never rejects. */
  close(): Promise<void>;
}
