/**
 * HostClient's waits, in memory and in virtual time: backoff that doubles up to its cap with jitter in
 * [delay × (1 − jitter), delay], and `Retry-After` (seconds or an HTTP date) honoured on 429 and 503,
 * for calls and for event streams. The client runs on a virtual clock (its `scheduler` option) that
 * records the delays it is asked for, so the specs read them exactly, and moves only as the client waits:
 * a Retry-After of seconds takes none. A wait on a real timer would never end here.
 */
import { firstValueFrom, toArray } from 'rxjs';
import { HostClient } from '../../src/client';
import type { RetryPolicy } from '../../src/client';
import { backoffDelay, offlineWait, retryAfterMs } from '../../src/client/retry';
import { VirtualClock } from '../support/virtual-time';
import { empty, FakeFetch, frames, json, networkError, problem, SseBody } from './fake-fetch';

const ENV = 'env-1';
const PID = '11111111-2222-4333-8444-555555555555';
/** The event streams' idle watchdog: set on every read, not a wait; the timer spy leaves it out. */
const IDLE_MS = 45_001;
const POLICY: RetryPolicy = { initialDelayMs: 2, maxDelayMs: 16, jitter: 0.5, maxOfflineMs: 60_000, streamIdleMs: IDLE_MS };

/** A random source that plays `values` in a loop. */
const sequence = (values: readonly number[]): (() => number) => {
  let i = 0;
  return () => values[i++ % values.length] ?? 0;
};

/** The virtual clock starts at a whole second of an HTTP date (Retry-After dates are whole seconds). */
const START = Date.parse('Tue, 02 Jan 2024 03:04:05 GMT');

/** The client's clock, new for each spec: the FakeFetch dates its calls by it too. */
let clock = new VirtualClock(START);
beforeEach(() => (clock = new VirtualClock(START)));

/** The waits the client asked its clock for: every delay but the idle watchdog's. */
const waits = (): number[] => clock.delays.filter((ms) => ms !== IDLE_MS);

const client = (fake: FakeFetch, random: () => number, policy: Partial<RetryPolicy> = POLICY): HostClient =>
  new HostClient({ url: 'http://host.test:8080', token: 'unit-spec-token-0123456789', fetch: fake.fetch, retry: policy, random, scheduler: clock });

/** The un-jittered delay before attempt `n + 1`. */
const nominal = (n: number, policy: RetryPolicy = POLICY): number => Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** n);

const expectJittered = (delays: readonly number[], policy: RetryPolicy = POLICY): void => {
  delays.forEach((delay, n) => {
    const full = nominal(n, policy);
    expect({ n, inRange: delay >= Math.floor(full * (1 - policy.jitter)) && delay <= full }).toEqual({ n, inRange: true });
  });
};

describe('backoff with jitter', () => {
  it('doubles from initialDelayMs to maxDelayMs, each drawn from [delay × (1 − jitter), delay]', () => {
    const policy: RetryPolicy = { initialDelayMs: 100, maxDelayMs: 1_000, jitter: 0.5, maxOfflineMs: 1, streamIdleMs: 45_000 };
    expect([0, 1, 2, 3, 4, 5, 40].map((n) => backoffDelay(n, policy, () => 0))).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
    expect([0, 1, 2, 3, 4].map((n) => backoffDelay(n, policy, () => 0.999999))).toEqual([50, 100, 200, 400, 500]);
    expect([0, 1, 2].map((n) => backoffDelay(n, policy, () => 0.5))).toEqual([75, 150, 300]);
    expect(backoffDelay(3, { ...policy, jitter: 0 }, () => 0.7)).toBe(800);
    const random = sequence([0.13, 0.91, 0.42, 0.77, 0.05]);
    for (let n = 0; n < 50; n += 1) {
      const delay = backoffDelay(n, policy, random);
      const full = Math.min(1_000, 100 * 2 ** n);
      expect(delay).toBeGreaterThanOrEqual(full * 0.5);
      expect(delay).toBeLessThanOrEqual(full);
    }
  });

  it('a call waits that way between its attempts (network errors, 502s)', async () => {
    const fake = new FakeFetch(clock).reply(networkError(), empty(502), networkError(), empty(504), networkError(), networkError(), json(200, { status: 'ended' }));
    await clock.run(client(fake, sequence([0, 0.999, 0.5, 0.25])).endStdin(ENV, PID));
    expect(fake.calls).toHaveLength(7);
    expect(waits()).toEqual([2, 2, 6, 14, 16, 8]);
    expectJittered(waits());
  });

  it('an event stream waits that way while the host is unreachable, and reconnects at once after a cut with progress', async () => {
    const fake = new FakeFetch(clock).reply(networkError(), networkError(), empty(502), networkError(), new SseBody(frames.output(1, 'a')).fail(), networkError(), new SseBody(frames.output(2, 'b'), frames.closed(3)).end());
    const events = await clock.run(firstValueFrom(client(fake, sequence([0.999, 0, 0.5, 0.1, 0.7])).events$(ENV, PID).pipe(toArray())));
    expect(events.map((e) => (e.type === 'truncated' ? -1 : e.seq))).toEqual([1, 2, 3]);
    expect(fake.calls.map((c) => c.url.searchParams.get('after'))).toEqual(['0', '0', '0', '0', '0', '1', '1']);
    // Four waits before the first stream, none after its cut (it brought seq 1), then the count goes on from 0.
    expect(waits()).toEqual([1, 4, 6, 15, 1]);
    expectJittered(waits().slice(0, 4));
    expectJittered(waits().slice(4));
  });

  it('an event stream that keeps opening without progress backs off too', async () => {
    const fake = new FakeFetch(clock).reply(new SseBody(frames.ping()).end(), new SseBody().fail(), new SseBody(frames.ping()).end(), new SseBody(frames.closed(1)).end());
    const events = await clock.run(firstValueFrom(client(fake, () => 0).events$(ENV, PID).pipe(toArray())));
    expect(events).toEqual([{ type: 'closed', seq: 1 }]);
    expect(waits()).toEqual([2, 4, 8]);
  });

  it('the overview stream backs off when each connection ends after its first snapshot (a re-statement, not progress), and resets after a change', async () => {
    const overview = (processCount: number): string =>
      `event: overview\ndata: ${JSON.stringify({ hostInstance: 'a0a0a0a0-0000-4000-8000-00000000000a', environments: [{ id: ENV, generation: 1, state: 'connected', error: null, info: null, processCount, processes: [] }] })}\n\n`;
    // Three connections that end right after the snapshot every connection opens with, then one that
    // also brings a change, then one that ends after its first snapshot again, then one that stays open.
    const open = new SseBody(overview(2));
    const fake = new FakeFetch(clock).reply(
      new SseBody(overview(0)).end(),
      new SseBody(overview(0)).end(),
      new SseBody(overview(0)).end(),
      new SseBody(overview(0), overview(1)).end(),
      new SseBody(overview(1)).end(),
      open,
    );
    const seen: number[] = [];
    let lastOne = (): void => undefined;
    const lastSeen = new Promise<void>((resolve) => (lastOne = resolve));
    const subscription = client(fake, () => 0).environments$.subscribe((environments) => {
      seen.push(environments[0]?.processCount ?? -1);
      if (seen.at(-1) === 2) lastOne();
    });
    await clock.run(lastSeen);
    subscription.unsubscribe();
    // Every snapshot still reaches the subscriber; the waits double while nothing changes, and a
    // connection that brought a change reconnects at once and starts the count again.
    expect(seen).toEqual([0, 0, 0, 0, 1, 1, 2]);
    expect(waits()).toEqual([2, 4, 8, 2]);
    expect(fake.calls.every((c) => c.url.pathname === '/api/v1/overview')).toBe(true);
    expect(open.cancelled).toBe(true);
  });
});

describe('the bound on being unreachable (maxOfflineMs)', () => {
  it('cuts the last wait so that the last attempt comes when the bound runs out, then gives up', () => {
    expect(offlineWait(80, 1_000, 100, 1_000)).toBe(80);
    expect(offlineWait(80, 1_000, 100, 1_085)).toBe(15);
    expect(offlineWait(80, 1_000, 100, 1_100)).toBeUndefined();
    expect(offlineWait(80, 1_000, 100, 1_300)).toBeUndefined();
  });

  const unreachablePolicy: RetryPolicy = { initialDelayMs: 80, maxDelayMs: 80, jitter: 0, maxOfflineMs: 100, streamIdleMs: IDLE_MS };

  it('a call gives up HOST_UNREACHABLE when maxOfflineMs runs out, not one backoff later: its waits add up to the bound', async () => {
    const fake = new FakeFetch(clock);
    for (let i = 0; i < 50; i += 1) fake.reply(networkError());
    const error = await clock.run(client(fake, () => 0, unreachablePolicy).endStdin(ENV, PID).catch((e: unknown) => e));
    expect(error).toMatchObject({ code: 'HOST_UNREACHABLE' });
    // 80, then what was left of the 100 ms (never a second whole 80), then no more attempts.
    expect(waits()[0]).toBe(80);
    expect(waits().length).toBe(2);
    expect(waits()[1]).toBeLessThanOrEqual(20);
    expect(fake.calls).toHaveLength(3);
  });

  it('an event stream does the same, for no answer and for 503', async () => {
    for (const failure of [networkError, () => problem(503, 'ENVIRONMENT_FAILED')]) {
      clock = new VirtualClock(START);
      const fake = new FakeFetch(clock);
      for (let i = 0; i < 50; i += 1) fake.reply(failure());
      const error = await clock.run(firstValueFrom(client(fake, () => 0, unreachablePolicy).events$(ENV, PID).pipe(toArray())).catch((e: unknown) => e));
      expect(error).toMatchObject({ code: 'HOST_UNREACHABLE' });
      expect(waits()[0]).toBe(80);
      expect(waits().length).toBe(2);
      expect(waits()[1]).toBeLessThanOrEqual(20);
      expect(fake.calls).toHaveLength(3);
    }
  });
});

describe('Retry-After', () => {
  it('parses seconds and HTTP dates, and ignores what is neither', () => {
    const now = Date.parse('Tue, 02 Jan 2024 03:04:05 GMT');
    expect(retryAfterMs('3', () => now)).toBe(3_000);
    expect(retryAfterMs('0', () => now)).toBe(0);
    expect(retryAfterMs('Tue, 02 Jan 2024 03:04:12 GMT', () => now)).toBe(7_000);
    expect(retryAfterMs('Tue, 02 Jan 2024 03:00:00 GMT', () => now)).toBe(0);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('')).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(' 2 ', () => now)).toBe(2_000);
    expect(retryAfterMs('Tuesday, 02-Jan-24 03:04:06 GMT', () => now)).toBe(1_000);
    expect(retryAfterMs('Tue Jan  2 03:04:08 2024', () => now)).toBe(3_000);
    // Malformed: not "retry at once" (Date.parse would read '-4' as the year -4, in the past).
    for (const bad of ['-4', '1.5', '1e3', '0x10', '2024-01-02T03:04:12Z', 'Soonday, 02 Jan 2024 03:04:12 GMT']) expect({ bad, ms: retryAfterMs(bad, () => now) }).toEqual({ bad, ms: undefined });
  });

  /** An HTTP date about 2 s ahead of the client's clock (whole seconds: the wait is in (1, 2] s). */
  const inTwoSeconds = (): string => new Date(clock.now() + 2_000).toUTCString();

  it.each([
    [429, 'seconds'],
    [503, 'an HTTP date'],
  ] as const)('a call answered %i with Retry-After in %s waits that long, then sends again', async (status, form) => {
    const header = form === 'seconds' ? '1' : inTwoSeconds();
    const fake = new FakeFetch(clock).reply(problem(status, status === 429 ? 'RATE_LIMITED' : 'ENVIRONMENT_RECOVERING', { headers: { 'retry-after': header } }), json(200, { running: true }));
    expect(await clock.run(client(fake, () => 0).terminate(ENV, PID))).toBe(true);
    expect(waits()).toHaveLength(1);
    const [delay = 0] = waits();
    if (form === 'seconds') expect(delay).toBe(1_000);
    else expect([delay > 1_000 - 50, delay <= 2_000]).toEqual([true, true]);
    const [first, second] = fake.calls;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(delay - 5);
  });

  it.each([
    [503, 'seconds'],
    [429, 'an HTTP date'],
  ] as const)('an event stream answered %i with Retry-After in %s waits that long, then opens again', async (status, form) => {
    const header = form === 'seconds' ? '1' : inTwoSeconds();
    const fake = new FakeFetch(clock).reply(problem(status, 'TOO_MANY_STREAMS', { headers: { 'retry-after': header } }), new SseBody(frames.output(1, 'x'), frames.closed(2)).end());
    const events = await clock.run(firstValueFrom(client(fake, () => 0).events$(ENV, PID).pipe(toArray())));
    expect(events.map((e) => e.type)).toEqual(['output', 'closed']);
    expect(waits()).toHaveLength(1);
    const [delay = 0] = waits();
    if (form === 'seconds') expect(delay).toBe(1_000);
    else expect([delay > 1_000 - 50, delay <= 2_000]).toEqual([true, true]);
    const [first, second] = fake.calls;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(delay - 5);
  });

  it('without Retry-After, a 503 backs off like any failure', async () => {
    const fake = new FakeFetch(clock).reply(problem(503, 'ENVIRONMENT_RECOVERING'), problem(503, 'ENVIRONMENT_RECOVERING'), problem(429, 'RATE_LIMITED'), json(202, { status: 'interrupted' }));
    await clock.run(client(fake, () => 0).interrupt(ENV, PID));
    expect(waits()).toEqual([2, 4, 8]);
  });
});
