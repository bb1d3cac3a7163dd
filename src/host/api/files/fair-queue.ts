/**
 * The per-environment line of the file routes' calls to the executor. The executor answers one
 * connection's requests one after another unless it runs with `--concurrent-requests` (docs/protocol.md#one-request-at-a-time),
 * and `process/start` and stdin writes wait in that same line: so the host lets at most `limit` file
 * requests of an environment be in flight at once, and serves the requests that wait round-robin across
 * their lanes. A lane is one HTTP request or stream (a download's block reads, a listing's stats): each
 * turn takes the first task of the next lane that has one, so a big download with many reads queued
 * gets one slot per turn and a listing behind it waits for one task of it, not for the whole file.
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { ApiProblem } from '../problem';
import { DEFAULT_HANDLE_WAIT_MS } from './files-options';

/** One task that waits for a slot. */
interface Waiting {
  /** Whether the lane's signal drops it while it waits. */
  readonly abortable: boolean;
  readonly start: () => void;
  readonly cancel: (reason: unknown) => void;
}

/** How one task runs in its lane. */
export interface LaneRunOptions {
  /** Whether an abort of the lane's signal drops it while it waits (a close that cleans up is not). @default true */
  readonly abortable?: boolean;
  /**
   * This task's own signal: its abort drops the task while it waits (rejecting with the reason). One task
   * per signal (it holds a listener while it waits); the lane's signal is the one a request's tasks share.
   */
  readonly signal?: AbortSignal;
}

/**
 * One request's (or stream's) place in a {@link FairQueue}: its tasks run in order of submission. An abort
 * of its signal drops every abortable task that still waits (those already running are their own
 * business). The lane listens to its signal with ONE listener, and only while it has an abortable task
 * waiting: a listing that stats a thousand entries through one request's signal adds one listener, not a
 * thousand (which Node warns about past ten: MaxListenersExceededWarning), and none is left once they ran.
 */
export class QueueLane {
  /** @internal Its waiting tasks, oldest first. */
  readonly waiting: Waiting[] = [];
  private listening = false;
  private readonly onAbort = (): void => {
    const reason: unknown = this.signal?.reason;
    for (const entry of this.waiting.filter((waiting) => waiting.abortable)) entry.cancel(reason);
  };

  /** @internal Made by {@link FairQueue.lane}. */
  constructor(
    private readonly queue: FairQueue,
    /** Aborted when the request's client went away. @default none */
    private readonly signal?: AbortSignal,
  ) {}

  /**
   * Runs `task` once a slot is free and this lane's turn came. Resolves or rejects as `task` does; an
   * abort of the lane's signal while it waits rejects with the signal's reason and it never runs (unless
   * `options.abortable` is false).
   */
  run<T>(task: () => Promise<T>, options: LaneRunOptions = {}): Promise<T> {
    const abortable = options.abortable !== false && this.signal !== undefined;
    if (abortable && this.signal?.aborted === true) return Promise.reject(this.signal.reason);
    if (options.signal?.aborted === true) return Promise.reject(options.signal.reason);
    return this.queue.submit(this, task, abortable, options.signal);
  }

  /** Abort listeners this lane holds on its signal now: 1 while an abortable task waits, else 0 (bookkeeping). */
  get listeners(): number {
    return this.listening ? 1 : 0;
  }

  /** @internal Listens to the signal while an abortable task waits, and only then. */
  sync(): void {
    const need = this.signal !== undefined && this.waiting.some((entry) => entry.abortable);
    if (need === this.listening) return;
    this.listening = need;
    if (need) this.signal?.addEventListener('abort', this.onAbort);
    else this.signal?.removeEventListener('abort', this.onAbort);
  }
}

/** At most `limit` tasks in flight, the waiting ones served round-robin across lanes (see the module's doc). */
export class FairQueue {
  private inFlight = 0;
  /** The lanes with a waiting task, in the order their turns come. */
  private readonly ready: QueueLane[] = [];

  constructor(
    /** Tasks in flight at most (`files.requestsInFlight`). */
    readonly limit: number,
  ) {
    if (!(Number.isSafeInteger(limit) && limit >= 1)) throw new RangeError(`a file queue's limit must be a whole number >= 1 (got ${limit})`);
  }

  /** Tasks running now (bookkeeping). */
  get running(): number {
    return this.inFlight;
  }

  /** Tasks waiting for a slot (bookkeeping). */
  get waiting(): number {
    return this.ready.reduce((sum, lane) => sum + lane.waiting.length, 0);
  }

  /** A new lane (one per request or stream); `signal` drops its waiting tasks (see {@link QueueLane}). */
  lane(signal?: AbortSignal): QueueLane {
    return new QueueLane(this, signal);
  }

  /** @internal What {@link QueueLane.run} does. */
  submit<T>(lane: QueueLane, task: () => Promise<T>, abortable: boolean, own?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onOwnAbort = (): void => entry.cancel(own?.reason);
      const entry: Waiting = {
        abortable,
        start: () => {
          own?.removeEventListener('abort', onOwnAbort);
          this.inFlight += 1;
          let settled: Promise<T>;
          try {
            settled = task();
          } catch (error: unknown) {
            settled = Promise.reject(error);
          }
          // The slot is free before the caller hears the outcome.
          const free = (): void => {
            this.inFlight -= 1;
            this.pump();
          };
          settled.then(
            (value) => {
              free();
              resolve(value);
            },
            (error: unknown) => {
              free();
              reject(error);
            },
          );
        },
        cancel: (reason) => {
          own?.removeEventListener('abort', onOwnAbort);
          const at = lane.waiting.indexOf(entry);
          if (at < 0) return;
          lane.waiting.splice(at, 1);
          if (lane.waiting.length === 0) this.forget(lane);
          lane.sync();
          reject(reason);
        },
      };
      own?.addEventListener('abort', onOwnAbort, { once: true });
      lane.waiting.push(entry);
      lane.sync();
      if (lane.waiting.length === 1) this.ready.push(lane);
      this.pump();
    });
  }

  /** Starts waiting tasks while slots are free: each from the next lane in turn, which goes to the back. */
  private pump(): void {
    while (this.inFlight < this.limit) {
      const lane = this.ready.shift();
      if (lane === undefined) return;
      const next = lane.waiting.shift();
      if (lane.waiting.length > 0) this.ready.push(lane);
      lane.sync();
      next?.start();
    }
  }

  private forget(lane: QueueLane): void {
    const at = this.ready.indexOf(lane);
    if (at >= 0) this.ready.splice(at, 1);
  }
}

/** One request waiting for a handle. */
interface HandleWaiter {
  readonly grant: () => void;
}

/**
 * The host's cap on the executor handles (`fs/open`) the file routes of one environment hold open at once:
 * each download and upload holds one for as long as it runs. A request that finds the cap full waits its
 * turn (first come, first served) for up to `waitMs` on the host's scheduler, then is refused with 503
 * `FILE_BUSY` and `Retry-After`: a burst of downloads of one file is served in turn, not refused, while a
 * client that holds every handle for minutes makes the others fail in bounded time.
 */
export class HandleCap {
  private open = 0;
  private readonly waiters: HandleWaiter[] = [];

  constructor(
    /** Handles open at most (`files.maxHandles`). */
    readonly limit: number,
    /** Where the wait is timed. @default asyncScheduler */
    private readonly scheduler: SchedulerLike = asyncScheduler,
    /** How long a request waits for a handle before 503 `FILE_BUSY`. @default {@link DEFAULT_HANDLE_WAIT_MS} (10 s) */
    readonly waitMs: number = DEFAULT_HANDLE_WAIT_MS,
  ) {
    if (!(Number.isSafeInteger(limit) && limit >= 1)) throw new RangeError(`a handle cap must be a whole number >= 1 (got ${limit})`);
    if (!(Number.isSafeInteger(waitMs) && waitMs >= 0)) throw new RangeError(`a handle wait must be a whole number of ms >= 0 (got ${waitMs})`);
  }

  /** Handles held now (bookkeeping). */
  get held(): number {
    return this.open;
  }

  /** Requests waiting for a handle now (bookkeeping). */
  get queued(): number {
    return this.waiters.length;
  }

  /**
   * Takes one, at once when the cap has room and nobody waits, else after those that came first; resolves
   * with what gives it back (idempotent). Rejects with ApiProblem 503 `FILE_BUSY` (`Retry-After: 2`) when
   * none came free within `waitMs`, or with `signal`'s reason when it aborts while waiting (the client went
   * away): either way it waits no more and holds nothing.
   */
  take(environmentId: string, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    if (this.open < this.limit && this.waiters.length === 0) return Promise.resolve(this.hold());
    return new Promise((resolve, reject) => {
      const leave = (): void => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        timer.unsubscribe();
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        leave();
        reject(signal?.reason);
      };
      const waiter: HandleWaiter = {
        grant: () => {
          leave();
          resolve(this.hold());
        },
      };
      this.waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      // Nothing above calls leave() before this line runs (a grant or an abort comes later).
      const timer: Subscription = this.scheduler.schedule(() => {
        leave();
        const detail = `environment ${environmentId} has ${this.limit} file transfers open through this host (its cap) and none came free within ${this.waitMs} ms; retry shortly`;
        reject(new ApiProblem(503, 'FILE_BUSY', detail, { 'retry-after': '2' }));
      }, this.waitMs);
    });
  }

  /** Counts one handle taken; returns what gives it back, to the first waiter if any. */
  private hold(): () => void {
    this.open += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.open -= 1;
      if (this.open < this.limit) this.waiters[0]?.grant();
    };
  }
}
