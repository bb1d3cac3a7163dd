import type { SchedulerLike, Subscriber, Subscription } from 'rxjs';
import { asyncScheduler, Observable } from 'rxjs';
import type { ExecClientError } from '../errors';
import type { ExecProcess } from './exec-process';
import type { ProcessState } from './process-status';

/** One process as `Environment.processes$` lists it. A new object whenever something in it changes. */
export interface ProcessSummary {
  /** The process id (also its id on the executor). */
  readonly processId: string;
  /** The command's argv as started (for a command started through a wrapper, the command's own). */
  readonly argv: readonly string[];
  /** Whether it runs on a pty. */
  readonly tty: boolean;
  /** `running`, `exited` (output may still follow), `closed` or `failed`. */
  readonly state: ProcessState;
  /** The exit code once the process exited. */
  readonly exitCode: number | undefined;
  /** Why it failed, once `failed`. */
  readonly error: ExecClientError | undefined;
  /** When it was listed, i.e. started (epoch ms on the environment's clock: its scheduler). */
  readonly startedAt: number;
  /** When it was first seen exited (epoch ms, as `startedAt`); undefined while it runs, and for one that failed before it exited. */
  readonly exitedAt: number | undefined;
}

/** How long and how many ended processes an environment keeps listed (and their histories). */
export interface ProcessTableOptions {
  /** How long a closed or failed process stays listed after it ended. @default 80000 (the executor's own retention) */
  readonly keepClosedMs?: number;
  /** At most this many closed or failed processes stay listed; beyond, the oldest ended goes first. @default 256 */
  readonly keepClosed?: number;
  /** Drives the `keepClosedMs` timers. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
}

/** Default {@link ProcessTableOptions.keepClosedMs}. */
export const DEFAULT_KEEP_CLOSED_MS = 80_000;
/** Default {@link ProcessTableOptions.keepClosed}. */
export const DEFAULT_KEEP_CLOSED = 256;

/** What an environment's process list holds right now (part of `Environment.facts`). */
export interface ProcessTableFacts {
  /** Listed processes by state. */
  readonly processes: Readonly<Record<ProcessState, number>>;
  /** Events their histories hold for replay, all together. */
  readonly retainedEvents: number;
  /** Output bytes their histories hold for replay, all together. */
  readonly retainedBytes: number;
  /** Live subscribers of their histories, all together. */
  readonly historySubscribers: number;
}

interface Entry {
  readonly process: ExecProcess;
  readonly argv: readonly string[];
  readonly tty: boolean;
  /** Made when a snapshot needs it, kept until the process changes. */
  summary: ProcessSummary | undefined;
  /** When it ended (scheduler time), once it has. */
  endedAt: number;
  /** When it was listed (scheduler time). */
  readonly startedAt: number;
  /** When it was first seen with an exit code (scheduler time). */
  exitedAt: number | undefined;
  released: boolean;
  /** Told once when it leaves the list. */
  readonly onDelisted: (() => void) | undefined;
}

/**
 * The processes of one environment, in start order. An ended (closed or failed) process stays listed
 * until it is released, for `keepClosedMs`, and while it is among the newest `keepClosed` ended ones,
 * whichever ends first; taking it off the list releases its history too, so an application that never
 * calls `release()` does not grow without bound.
 *
 * Teardown: `end()` (when the environment fails or closes) cancels the timers and completes `processes$`.
 */
export class ProcessTable {
  private readonly entries = new Map<string, Entry>();
  /** Ended processes, oldest first (a Set keeps insertion order). */
  private readonly ended = new Set<string>();
  /** One timer for all of them: set for the oldest ended process while any is listed. */
  private expiry: Subscription | undefined;
  private readonly keepClosedMs: number;
  private readonly keepClosed: number;
  private readonly scheduler: SchedulerLike;
  private observers: Subscriber<readonly ProcessSummary[]>[] = [];
  private snapshotCache: readonly ProcessSummary[] | undefined;
  private finished = false;

  /**
   * The list as a new frozen array on each change (a process added, changing state, or taken off),
   * replaying the current one to each subscriber; unchanged entries keep their summary object. Costs
   * nothing while unobserved. Completes when the environment fails or closes (after the list that
   * shows its processes failed). Never errors; unsubscribing affects nothing else.
   */
  readonly processes$: Observable<readonly ProcessSummary[]>;

  constructor(options: ProcessTableOptions = {}) {
    this.keepClosedMs = options.keepClosedMs ?? DEFAULT_KEEP_CLOSED_MS;
    this.keepClosed = options.keepClosed ?? DEFAULT_KEEP_CLOSED;
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.processes$ = new Observable<readonly ProcessSummary[]>((subscriber) => {
      subscriber.next(this.snapshot());
      if (this.finished) {
        subscriber.complete();
        return undefined;
      }
      this.observers = [...this.observers, subscriber];
      return () => {
        this.observers = this.observers.filter((o) => o !== subscriber);
      };
    });
  }

  /** A listed process by id. */
  get(processId: string): ExecProcess | undefined {
    return this.entries.get(processId)?.process;
  }

  /** Listed processes (bookkeeping). */
  get size(): number {
    return this.entries.size;
  }

  /** The listed processes by state and what their histories hold: a new object on each call, O(listed). */
  facts(): ProcessTableFacts {
    const processes: Record<ProcessState, number> = { running: 0, exited: 0, closed: 0, failed: 0 };
    let retainedEvents = 0;
    let retainedBytes = 0;
    let historySubscribers = 0;
    for (const { process } of this.entries.values()) {
      processes[process.state] += 1;
      const retained = process.retained;
      retainedEvents += retained.events;
      retainedBytes += retained.bytes;
      historySubscribers += retained.subscribers;
    }
    return { processes, retainedEvents, retainedBytes, historySubscribers };
  }

  /**
   * Lists a started process; `onDelisted` is called once, synchronously, when it leaves the list (never
   * when the list has ended already: then it is not listed at all).
   */
  add(process: ExecProcess, argv: readonly string[], tty: boolean, onDelisted?: () => void): void {
    if (this.finished) return;
    const now = this.scheduler.now();
    const exitedAt = process.exitCode === undefined ? undefined : now;
    const entry: Entry = { process, argv: Object.freeze([...argv]), tty, summary: undefined, endedAt: 0, startedAt: now, exitedAt, released: false, onDelisted };
    this.entries.set(process.processId, entry);
    this.changed(process.processId);
  }

  /** A listed process changed state. */
  changed(processId: string): void {
    const entry = this.entries.get(processId);
    if (entry === undefined) return;
    entry.summary = undefined;
    if (entry.exitedAt === undefined && entry.process.exitCode !== undefined) entry.exitedAt = this.scheduler.now();
    const state = entry.process.state;
    if (state === 'closed' || state === 'failed') this.onEnded(processId, entry);
    this.publish();
  }

  /** A process's history was released: it leaves the list once it has ended. */
  released(processId: string): void {
    const entry = this.entries.get(processId);
    if (entry === undefined) return;
    entry.released = true;
    if (this.ended.has(processId)) this.remove(processId);
  }

  /** The environment failed or closed: no more timers, `processes$` completes. Idempotent. */
  end(): void {
    if (this.finished) return;
    this.finished = true;
    this.expiry?.unsubscribe();
    this.expiry = undefined;
    const observers = this.observers;
    this.observers = [];
    for (const observer of observers) observer.complete();
  }

  private onEnded(processId: string, entry: Entry): void {
    if (this.ended.has(processId)) return;
    if (entry.released) {
      this.remove(processId);
      return;
    }
    entry.endedAt = this.scheduler.now();
    this.ended.add(processId);
    if (this.expiry === undefined) this.scheduleExpiry();
    for (const oldest of this.ended) {
      if (this.ended.size <= this.keepClosed) break;
      this.remove(oldest);
    }
  }

  /** Takes a process off the list and releases its history. */
  private remove(processId: string): void {
    const entry = this.entries.get(processId);
    if (entry === undefined) return;
    this.entries.delete(processId);
    this.ended.delete(processId);
    if (this.ended.size === 0) {
      this.expiry?.unsubscribe();
      this.expiry = undefined;
    }
    entry.process.release();
    this.publish();
    try {
      entry.onDelisted?.();
    } catch {
      // The caller's hook failed: the list, its timer and the evictions in progress must not.
    }
  }

  /** Arms the one timer for the oldest ended process (nothing once finished or when none is listed). */
  private scheduleExpiry(): void {
    const oldest = this.ended.values().next();
    const entry = oldest.done === true ? undefined : this.entries.get(oldest.value);
    if (this.finished || entry === undefined) return;
    const delay = Math.max(0, entry.endedAt + this.keepClosedMs - this.scheduler.now());
    this.expiry = this.scheduler.schedule(() => {
      this.expiry = undefined;
      this.expire();
    }, delay);
  }

  /** Takes off the list every ended process whose `keepClosedMs` has passed, then re-arms the timer. */
  private expire(): void {
    const now = this.scheduler.now();
    for (const processId of [...this.ended]) {
      const entry = this.entries.get(processId);
      if (entry !== undefined && entry.endedAt + this.keepClosedMs > now) break;
      this.remove(processId);
    }
    this.scheduleExpiry();
  }

  private publish(): void {
    this.snapshotCache = undefined;
    if (this.observers.length === 0) return;
    const snapshot = this.snapshot();
    for (const observer of this.observers) observer.next(snapshot);
  }

  private snapshot(): readonly ProcessSummary[] {
    this.snapshotCache ??= Object.freeze([...this.entries.values()].map((entry) => (entry.summary ??= summarize(entry))));
    return this.snapshotCache;
  }
}

const summarize = ({ process, argv, tty, startedAt, exitedAt }: Entry): ProcessSummary =>
  Object.freeze({ processId: process.processId, argv, tty, state: process.state, exitCode: process.exitCode, error: process.failure, startedAt, exitedAt });
