import type { Observable, SchedulerLike } from 'rxjs';
import { BehaviorSubject, NEVER, timer } from 'rxjs';
import { map, switchMap, take } from 'rxjs/operators';

/**
 * A connection's running time: the scheduler's time less the time its socket was paused. It stands
 * still while paused, so a timer measured on it (a call's deadline, a ping's wait for its pong) does
 * not run out because we stopped reading the reply it waits for. One per connection; the connection
 * pauses and resumes it with its socket.
 */
export class PauseClock {
  private pausedAt: number | undefined;
  private pausedTotal = 0;
  private readonly pausedState = new BehaviorSubject<boolean>(false);

  constructor(private readonly scheduler: SchedulerLike) {}

  /** Whether the clock stands still. */
  get paused(): boolean {
    return this.pausedAt !== undefined;
  }

  /** The running time: scheduler time less every paused stretch (frozen while paused). */
  now(): number {
    return (this.pausedAt ?? this.scheduler.now()) - this.pausedTotal;
  }

  /** Stops the clock (idempotent). */
  pause(): void {
    if (this.pausedAt !== undefined) return;
    this.pausedAt = this.scheduler.now();
    this.pausedState.next(true);
  }

  /** Starts the clock again (idempotent). */
  resume(): void {
    const pausedAt = this.pausedAt;
    if (pausedAt === undefined) return;
    this.pausedTotal += this.scheduler.now() - pausedAt;
    this.pausedAt = undefined;
    this.pausedState.next(false);
  }

  /**
   * Emits once (then completes) when the running time reaches `at`: a scheduler timer while running,
   * none while paused (it is set again, for what is left, on resume).
   */
  until(at: number): Observable<number> {
    return this.pausedState.pipe(
      switchMap((paused) => (paused ? NEVER : timer(Math.max(0, at - this.now()), this.scheduler))),
      take(1),
      map(() => at),
    );
  }
}
