/**
 * How long a restarted host waits for the executors whose sessions it remembered at its start: until each
 * one's first session since the start is installed (taken back, or found gone and made anew), or
 * `waitMs` from the start ran out. The operator API's followers and keyed starts wait on it.
 */
import type { Observable, SchedulerLike } from 'rxjs';
import { endWith, filter, map, of, race, Subject, take, timer } from 'rxjs';

/** The waits of one host (see the module's doc). `close()` ends every wait. */
export class TakeBackWait {
  /** Environments whose first session since this host started is installed (taken back or new). */
  private readonly installed = new Set<string>();
  /** The id of each environment whose first session since the start was installed. */
  private readonly settledSubject = new Subject<string>();
  private readonly startedAt: number;
  private closed = false;

  constructor(
    /** The session the host remembered at its start for an environment, if any. */ private readonly rememberedAt: (id: string) => string | undefined,
    /** How long after the start a remembered executor is expected back. */ private readonly waitMs: number,
    private readonly scheduler: SchedulerLike,
  ) {
    this.startedAt = scheduler.now();
  }

  /** Whether environment `id`'s first session since the start is installed. */
  installedSinceStart(id: string): boolean {
    return this.installed.has(id);
  }

  /**
   * Whether the host still expects the executor of `id` back: it remembered its session at the start,
   * its first session since is not installed, and `waitMs` since the start has not run out.
   */
  awaiting(id: string): boolean {
    if (this.closed || this.installed.has(id) || this.rememberedAt(id) === undefined) return false;
    return this.scheduler.now() < this.startedAt + this.waitMs;
  }

  /**
   * Emits once and completes when `id` is no longer awaited: at once when it is not; else once its first
   * session is installed, once the wait runs out, or on `close()`. Cold; unsubscribing stops its timer.
   */
  settled$(id: string): Observable<void> {
    if (!this.awaiting(id)) return of(undefined);
    const settled$ = this.settledSubject.pipe(
      filter((settled) => settled === id),
      endWith(id),
    );
    return race(settled$, timer(Math.max(0, this.startedAt + this.waitMs - this.scheduler.now()), this.scheduler)).pipe(
      take(1),
      map(() => undefined),
    );
  }

  /** Environment `id`'s first session since the start is installed: its waiters go on. */
  settle(id: string): void {
    this.installed.add(id);
    this.settledSubject.next(id);
  }

  /** Ends every wait (the host closes). Idempotent. */
  close(): void {
    this.closed = true;
    this.settledSubject.complete();
  }
}
