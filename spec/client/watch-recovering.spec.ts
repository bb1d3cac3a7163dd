/**
 * watch$ with a process whose environment is still starting: the host's overview stream ends the process
 * part with `failed` ENVIRONMENT_RECOVERING (a request for it would get 503 with `Retry-After: 1`). That
 * is not the process failing: the watch asks again each second, resuming after the last seq, and says so
 * with a `connection` event, the overview going on meanwhile; only past maxOfflineMs is it a
 * `processFailed`. Virtual time; the host is a scripted fetch.
 */
import type { WatchEvent } from '../../src/client';
import { HostClient } from '../../src/client';
import { VirtualClock } from '../support/virtual-time';
import { FakeFetch, frames, HOST_A, SseBody } from './fake-fetch';

const ENV = 'env-1';
const PID = '11111111-2222-4333-8444-555555555555';
const overview = `event: overview\ndata: ${JSON.stringify({ hostInstance: HOST_A, environments: [{ id: ENV, generation: 1, state: 'starting', error: null, info: null, processCount: 1, processes: [] }] })}\n\n`;
const recovering = frames.failed('ENVIRONMENT_RECOVERING', `environment ${ENV} is starting`);

function watch(fake: FakeFetch, clock: VirtualClock, maxOfflineMs = 90_000): { readonly events: WatchEvent[]; readonly lines: () => string[]; until(line: string): Promise<void>; stop(): void } {
  const client = new HostClient({ url: 'http://host.test:8080/', token: 'unit-spec-token-0123456789', fetch: fake.fetch, retry: { maxOfflineMs }, random: () => 0.5, scheduler: clock });
  const events: WatchEvent[] = [];
  const waiters: { readonly line: string; readonly resolve: () => void }[] = [];
  const subscription = client.watch$({ environmentId: ENV, processId: PID }).subscribe({
    next: (event) => {
      events.push(event);
      const seen = lines();
      for (const waiter of waiters.splice(0)) {
        if (seen.includes(waiter.line)) waiter.resolve();
        else waiters.push(waiter);
      }
    },
    error: (error: unknown) => events.push({ type: 'processFailed', code: 'WATCH_ERROR', message: String(error) }),
  });
  const lines = (): string[] =>
    events.map((event) => {
      switch (event.type) {
        case 'connection':
          return event.state === 'open' ? 'open' : `reconnecting: ${event.reason}`;
        case 'output':
          return `output ${event.seq} ${Buffer.from(event.chunk).toString()}`;
        case 'closed':
          return `closed ${event.seq}`;
        case 'processFailed':
          return `processFailed ${event.code}`;
        case 'exited':
          return `exited ${event.seq}`;
        case 'truncated':
        case 'overview':
          return event.type;
      }
    });
  const until = (line: string): Promise<void> => (lines().includes(line) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ line, resolve })));
  return { events, lines, until, stop: () => subscription.unsubscribe() };
}

/** The process selection of each request (`processId` and `after`), or `overview` alone. */
const asked = (fake: FakeFetch): string[] => fake.calls.map((call) => (call.url.searchParams.has('processId') ? `process after ${call.url.searchParams.get('after') ?? ''}` : 'overview'));

describe('HostClient.watch$ of a process whose environment is starting', () => {
  it('asks again each second, after the last seq, until the environment serves it; no processFailed', async () => {
    const clock = new VirtualClock();
    const fake = new FakeFetch(clock).reply(new SseBody(overview, frames.output(1, 'a'), recovering), new SseBody(overview, recovering), new SseBody(overview, frames.output(2, 'b'), frames.closed(3)));
    const watched = watch(fake, clock);
    const started = clock.now();
    await clock.run(watched.until('closed 3'));
    expect(asked(fake)).toEqual(['process after 0', 'process after 1', 'process after 1']);
    // One second between the askings, as the host's Retry-After for such a process says.
    expect(fake.calls.map((call) => call.at - started)).toEqual([0, 1000, 2000]);
    const starting = `reconnecting: environment ${ENV} is starting: its process's events follow once it is connected`;
    expect(watched.lines()).toEqual(['open', 'overview', 'output 1 a', starting, 'open', 'overview', starting, 'open', 'overview', 'output 2 b', 'closed 3']);
    watched.stop();
  });

  it('says processFailed ENVIRONMENT_RECOVERING once it has waited maxOfflineMs, and the overview goes on', async () => {
    const clock = new VirtualClock();
    // Each answer ends after its overview and its failed frame; the last one gives the overview alone.
    const fake = new FakeFetch(clock).reply(...Array.from({ length: 4 }, () => new SseBody(overview, recovering).end()), new SseBody(overview));
    const watched = watch(fake, clock, 2500);
    await clock.run(watched.until('processFailed ENVIRONMENT_RECOVERING'));
    const failedAt = watched.lines().indexOf('processFailed ENVIRONMENT_RECOVERING');
    await clock.run(fake.callsMade(5));
    await clock.run(watched.until('overview'));
    // Asked at 0, 1 s and 2 s; answered again at 3 s, past the bound: a failure now, and the next stream is the overview alone.
    expect(watched.lines().filter((line) => line.startsWith('processFailed'))).toEqual(['processFailed ENVIRONMENT_RECOVERING']);
    expect(watched.lines().slice(failedAt + 1)).toContain('overview');
    expect(asked(fake)).toEqual(['process after 0', 'process after 0', 'process after 0', 'process after 0', 'overview']);
    watched.stop();
  });
});
