/**
 * Whether the log store's Redis answers now: its connection is `ready`, no script call has waited past
 * `stallMs` for its answer (a paused or overloaded server keeps its sockets open), and no test switched
 * it off (`simulateOutage`). The flushers wait on it; a change to unreachable checks every log's buffer.
 */
import type Redis from 'ioredis';
import type { Observable, SchedulerLike } from 'rxjs';
import { BehaviorSubject, filter, firstValueFrom, map } from 'rxjs';

/** How long a flusher waits before it resends a call that failed while the connection looked ready. */
const RESEND_DELAY_MS = 100;

/** The store's view of its connection (see the module's doc). */
export class Reachability {
  private readonly reachable = new BehaviorSubject(true);
  private readonly inflight = new Set<number>();
  private readonly onConnection = (): void => this.update();
  private sent = 0;
  private stalled = false;
  private outage = false;

  constructor(
    private readonly redis: Redis,
    private readonly scheduler: SchedulerLike,
    /** A script call unanswered this long: unreachable. */ readonly stallMs: number,
    /** Told when Redis turns unreachable. */ private readonly onUnreachable: () => void,
  ) {
    for (const event of ['ready', 'close', 'end', 'reconnecting']) redis.on(event, this.onConnection);
    this.reachable.next(this.now);
  }

  /** Whether Redis answers now. */
  get now(): boolean {
    return !this.outage && !this.stalled && this.redis.status === 'ready';
  }

  /** For tests: Redis counts as unreachable while on. */
  simulateOutage(on: boolean): void {
    this.outage = on;
    this.update();
  }

  /** Whether Redis answers, now and at each change; completes when the store stops. */
  get changes$(): Observable<boolean> {
    return this.reachable.asObservable();
  }

  /** Resolves once Redis answers again, or the store stops. */
  whenReachable(): Promise<void> {
    return firstValueFrom(this.reachable.pipe(filter(Boolean), map(() => undefined)), { defaultValue: undefined });
  }

  /** Sends a call, watching it: unanswered after `stallMs`, Redis counts as unreachable until an answer. */
  async send<T>(call: () => Promise<T>): Promise<T> {
    const id = (this.sent += 1);
    this.inflight.add(id);
    const timer = this.scheduler.schedule(() => {
      if (!this.inflight.has(id)) return;
      this.stalled = true;
      this.update();
    }, this.stallMs);
    try {
      return await call();
    } finally {
      this.inflight.delete(id);
      timer.unsubscribe();
    }
  }

  /** A call was answered: Redis is reachable (as far as the connection goes). */
  answered(): void {
    if (!this.stalled) return;
    this.stalled = false;
    this.update();
  }

  /** A call failed in transit: the connection's state speaks now; waits a little before a resend when it looks ready. */
  async afterError(): Promise<void> {
    this.stalled = false;
    this.update();
    if (this.now) await this.within(RESEND_DELAY_MS, new Promise<void>(() => undefined));
  }

  /** Resolves `promise`'s value, or undefined after `ms` (a scheduler timer, cancelled when the promise wins). */
  within<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
    return new Promise((resolve) => {
      const timer = this.scheduler.schedule(() => resolve(undefined), ms);
      void promise.then((value) => {
        timer.unsubscribe();
        resolve(value);
      });
    });
  }

  /** Stops watching: the waiters are released. */
  stop(): void {
    for (const event of ['ready', 'close', 'end', 'reconnecting']) this.redis.off(event, this.onConnection);
    this.reachable.complete();
  }

  private update(): void {
    const now = this.now;
    if (now !== this.reachable.value && !this.reachable.closed) this.reachable.next(now);
    if (!now) this.onUnreachable();
  }
}
