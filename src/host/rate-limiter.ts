import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';

/**
 * A token bucket: `ratePerSecond` tokens refill continuously up to `burst`. Timer-free (it computes the
 * refill from the scheduler's clock on each take), so it holds no handle and needs no teardown.
 */
export class RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    /** The clock (`now()`). @default asyncScheduler */
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    if (!(ratePerSecond > 0) || !(burst >= 1)) throw new RangeError('rate limit needs ratePerSecond > 0 and burst >= 1');
    this.tokens = burst;
    this.last = scheduler.now();
  }

  /** Takes one token; `false` when the bucket is empty (the caller answers 429). */
  tryTake(): boolean {
    const now = this.scheduler.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.ratePerSecond);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Whole seconds until a token is available (for `Retry-After`), at least 1. */
  retryAfterSeconds(): number {
    return Math.max(1, Math.ceil((1 - this.tokens) / this.ratePerSecond));
  }
}
