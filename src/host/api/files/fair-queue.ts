/**
 * The per-environment line of the file routes' calls to the executor. The executor answers one
 * connection's requests one after another unless it runs with `--concurrent-requests` (PROTOCOL.md §2.6),
 * and `process/start` and stdin writes wait in that same line: so the host lets at most `limit` file
 * requests of an environment be in flight at once, and serves the requests that wait round-robin across
 * their lanes. A lane is one HTTP request or stream (a download's block reads, a listing's stats): each
 * turn takes the first task of the next lane that has one, so a big download with many reads queued
 * gets one slot per turn and a listing behind it waits for one task of it, not for the whole file.
 */
import { ApiProblem } from '../problem';

/** One task that waits for a slot. */
interface Waiting {
  readonly start: () => void;
  readonly cancel: (reason: unknown) => void;
}

/** One request's (or stream's) place in a {@link FairQueue}: its tasks run in order of submission. */
export class QueueLane {
  /** @internal Its waiting tasks, oldest first. */
  readonly waiting: Waiting[] = [];

  /** @internal Made by {@link FairQueue.lane}. */
  constructor(private readonly queue: FairQueue) {}

  /**
   * Runs `task` once a slot is free and this lane's turn came. Resolves or rejects as `task` does; an
   * abort of `signal` while it waits rejects with `signal.reason` and it never runs (once it runs, the
   * abort is the task's own business).
   */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.queue.submit(this, task, signal);
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

  /** A new lane (one per request or stream). */
  lane(): QueueLane {
    return new QueueLane(this);
  }

  /** @internal What {@link QueueLane.run} does. */
  submit<T>(lane: QueueLane, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => entry.cancel(signal?.reason);
      const entry: Waiting = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
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
          const at = lane.waiting.indexOf(entry);
          if (at < 0) return;
          lane.waiting.splice(at, 1);
          if (lane.waiting.length === 0) this.forget(lane);
          reject(reason);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      lane.waiting.push(entry);
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
      next?.start();
    }
  }

  private forget(lane: QueueLane): void {
    const at = this.ready.indexOf(lane);
    if (at >= 0) this.ready.splice(at, 1);
  }
}

/**
 * The host's cap on the executor handles (`fs/open`) the file routes of one environment hold open at once:
 * each download and upload holds one for as long as it runs. Past the cap a request is refused at once with
 * 503 `FILE_BUSY` and `Retry-After`, rather than held: a handle is held for as long as a client reads.
 */
export class HandleCap {
  private open = 0;

  constructor(
    /** Handles open at most (`files.maxHandles`). */
    readonly limit: number,
  ) {
    if (!(Number.isSafeInteger(limit) && limit >= 1)) throw new RangeError(`a handle cap must be a whole number >= 1 (got ${limit})`);
  }

  /** Handles held now (bookkeeping). */
  get held(): number {
    return this.open;
  }

  /** Takes one; returns what gives it back (idempotent). Throws ApiProblem 503 `FILE_BUSY` past the cap. */
  take(environmentId: string): () => void {
    if (this.open >= this.limit) {
      const detail = `environment ${environmentId} has ${this.limit} file transfers open through this host (its cap); retry shortly`;
      throw new ApiProblem(503, 'FILE_BUSY', detail, { 'retry-after': '2' });
    }
    this.open += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.open -= 1;
    };
  }
}
