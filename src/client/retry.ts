/**
 * How the client waits between attempts: exponential backoff with jitter, `Retry-After` when the host
 * gives one, and a bound on how long the host may stay unreachable before a call or stream fails.
 */
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';

/** The client's retry settings. */
export interface RetryPolicy {
  /** First delay after a failed attempt. @default 200 */
  readonly initialDelayMs: number;
  /** Largest delay between attempts (before jitter). @default 5000 */
  readonly maxDelayMs: number;
  /** Each delay is drawn from [delay × (1 − jitter), delay]. @default 0.5 */
  readonly jitter: number;
  /**
   * How long the host may stay unreachable (refused, reset, 502/503/504) before the call fails
   * `HOST_UNREACHABLE`: long enough to ride through a host restart of up to 60 s (plus its start).
   * @default 90000
   */
  readonly maxOfflineMs: number;
  /**
   * An event stream silent this long (the host pings every 15 s) is taken for a dead connection:
   * it is dropped and opened again, resuming by seq. @default 45000
   */
  readonly streamIdleMs: number;
}

/** Default {@link RetryPolicy}. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { initialDelayMs: 200, maxDelayMs: 5_000, jitter: 0.5, maxOfflineMs: 90_000, streamIdleMs: 45_000 };

/**
 * The wait before the next attempt while the host has been unreachable since `since` (ms, on the clock
 * of `now`, by default asyncScheduler's): `delayMs`, cut so that the last attempt comes when
 * `maxOfflineMs` runs out, not one whole backoff after it; `undefined` once it has run out (the caller
 * gives up with `HOST_UNREACHABLE`).
 */
export function offlineWait(delayMs: number, since: number, maxOfflineMs: number, now: number = asyncScheduler.now()): number | undefined {
  const left = since + maxOfflineMs - now;
  return left <= 0 ? undefined : Math.min(delayMs, left);
}

/** The delay before attempt `attempt + 1` (`attempt` counts failures so far, from 0). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const delay = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(attempt, 30));
  return Math.round(delay * (1 - policy.jitter * random()));
}

/** `delay-seconds`: digits only (RFC 9110 §10.2.3). */
const DELAY_SECONDS = /^\d+$/;
/** An `HTTP-date`: all three of its forms (IMF-fixdate, RFC 850, asctime) start with the day's name. */
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;

/**
 * `Retry-After` in milliseconds (delay-seconds or an HTTP-date, measured from `now()`, by default
 * asyncScheduler's clock), or `undefined` when absent or malformed (the caller then backs off as usual:
 * `-1` or `soon` must not turn into "retry at once").
 */
export function retryAfterMs(header: string | null, now: () => number = () => asyncScheduler.now()): number | undefined {
  const value = header?.trim() ?? '';
  if (DELAY_SECONDS.test(value)) return Number(value) * 1000;
  if (!HTTP_DATE.test(value)) return undefined;
  // asctime carries no zone; every HTTP-date is GMT.
  const date = Date.parse(/GMT$/.test(value) ? value : `${value} GMT`);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now());
}

/**
 * Waits `ms` on `scheduler`; rejects with `signal.reason` when `signal` aborts first, as Node's own
 * timers do (the timer is cancelled either way).
 */
export function sleep(ms: number, signal: AbortSignal | undefined, scheduler: SchedulerLike): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(abortReason(signal));
    const onAbort = (): void => {
      timer.unsubscribe();
      reject(abortReason(signal));
    };
    const timer = scheduler.schedule(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * What an aborted call rejects with: the signal's `reason`, as Node's own APIs do (`controller.abort()`
 * gives a DOMException named `AbortError`; `controller.abort(x)` gives `x`).
 */
export function abortReason(signal: AbortSignal | undefined): unknown {
  // A signal without a reason (an old polyfill) still rejects with an AbortError.
  return signal?.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
