import { RateLimiter } from '../../src/host/rate-limiter';

describe('RateLimiter', () => {
  it('allows a burst, then refills at the rate', () => {
    let now = 0;
    const limiter = new RateLimiter(2, 3, () => now);
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([true, true, true, false]);
    expect(limiter.retryAfterSeconds()).toBe(1);
    now = 499;
    expect(limiter.tryTake()).toBe(false);
    now = 1_000;
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([true, true, false]);
  });

  it('rejects nonsense limits', () => {
    expect(() => new RateLimiter(0, 1)).toThrow(RangeError);
    expect(() => new RateLimiter(1, 0)).toThrow(RangeError);
  });
});
