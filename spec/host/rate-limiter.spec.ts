import { RateLimiter } from '../../src/host/rate-limiter';
import { VirtualClock } from '../support/virtual-time';

describe('RateLimiter (on a virtual clock)', () => {
  it('allows a burst, then refills at the rate', async () => {
    const clock = new VirtualClock(0);
    const limiter = new RateLimiter(2, 3, clock);
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([true, true, true, false]);
    expect(limiter.retryAfterSeconds()).toBe(1);
    await clock.advance(499);
    expect(limiter.tryTake()).toBe(false);
    await clock.advance(501);
    expect([limiter.tryTake(), limiter.tryTake(), limiter.tryTake()]).toEqual([true, true, false]);
  });

  it('rejects nonsense limits', () => {
    expect(() => new RateLimiter(0, 1)).toThrow(RangeError);
    expect(() => new RateLimiter(1, 0)).toThrow(RangeError);
  });
});
