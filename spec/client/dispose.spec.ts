/**
 * HostClient's snapshot iterators and its dispose, in memory (a scripted fetch, no socket): a `break`
 * out of `for await` closes the HTTP stream; at most `bufferSize` snapshots wait (the newest kept); an
 * abort rejects with its reason; `await using` (dispose) ends every open stream and pending call with
 * ClosedError, and what is asked for afterwards fails at once.
 */
import { firstValueFrom } from 'rxjs';
import { ClosedError, HostClient } from '../../src/client';
import { FakeFetch, frames, SseBody } from './fake-fetch';

const ENV = 'env-1';
const PID = '11111111-2222-4333-8444-555555555555';

function client(fake: FakeFetch): HostClient {
  return new HostClient({ url: 'http://host.test:8080', token: 'unit-spec-token-0123456789', fetch: fake.fetch, retry: { initialDelayMs: 1, maxDelayMs: 4, jitter: 0.5 }, random: () => 0.5 });
}

const overview = (n: number): string => `event: overview\ndata: ${JSON.stringify({ hostInstance: 'h', environments: [{ id: `env-${n}`, generation: 1, state: 'connected', error: null, info: null, processCount: 0, processes: [] }] })}\n\n`;

describe('HostClient.environments() (for await)', () => {
  it('a break out of the loop closes the HTTP stream', async () => {
    const body = new SseBody(overview(1));
    const fake = new FakeFetch().reply(body);
    const seen: string[] = [];
    for await (const list of client(fake).environments()) {
      seen.push(list[0]?.id ?? '');
      break;
    }
    expect(seen).toEqual(['env-1']);
    expect({ aborted: fake.calls[0]?.signal?.aborted, calls: fake.calls.length }).toEqual({ aborted: true, calls: 1 });
  });

  it('keeps at most bufferSize snapshots waiting: the oldest go, the newest stays', async () => {
    const body = new SseBody(overview(1), overview(2), overview(3), overview(4), overview(5));
    const fake = new FakeFetch().reply(body);
    const iterator = client(fake).environments({ bufferSize: 2 });
    const first = await iterator.next();
    // Let the client read the rest of the body before the loop takes more.
    body.push(': ping\n\n');
    await fake.callsMade(1);
    for (let i = 0; i < 10 && body.reads < 3; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
    const rest = [await iterator.next(), await iterator.next()];
    await iterator.return?.();
    expect([first, ...rest].map((r) => (r.done === true ? 'done' : r.value[0]?.id))).toEqual(['env-1', 'env-4', 'env-5']);
  });

  it('aborting its signal rejects the waiting next() with the reason and closes the stream', async () => {
    const fake = new FakeFetch().reply(new SseBody());
    const controller = new AbortController();
    const iterator = client(fake).processes(ENV, { signal: controller.signal });
    const next = iterator.next();
    await fake.callsMade(1);
    controller.abort('stop it');
    await expect(next).rejects.toBe('stop it');
    expect(fake.calls[0]?.signal?.aborted).toBe(true);
  });

  it('refuses a bufferSize that is not a whole number >= 1', () => {
    expect(() => client(new FakeFetch()).environments({ bufferSize: 0 })).toThrow(RangeError);
  });
});

describe('HostClient dispose', () => {
  it('await using closes every open stream and rejects every pending call with ClosedError', async () => {
    const fake = new FakeFetch();
    let pending: { readonly calls: Promise<unknown>[]; readonly streams: Promise<unknown>[] } | undefined;
    {
      await using host = client(fake);
      const iterator = host.environments();
      const events = host.events(ENV, PID);
      pending = {
        calls: [host.terminate(ENV, PID), host.wait(ENV, PID)].map((p) => p.catch((e: unknown) => e)),
        streams: [iterator.next(), events.next(), firstValueFrom(host.events$(ENV, PID))].map((p) => p.catch((e: unknown) => e)),
      };
      await fake.callsMade(5);
    }
    const outcomes = await Promise.all([...pending.calls, ...pending.streams]);
    expect(outcomes.map((o) => o instanceof ClosedError && (o as ClosedError).code === 'CLOSED')).toEqual([true, true, true, true, true]);
    expect(fake.calls.map((c) => c.signal?.aborted)).toEqual([true, true, true, true, true]);
  });

  it('what is asked for after close fails at once with ClosedError, and sends nothing', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.closed(1)).end());
    const host = client(fake);
    await host.close();
    await expect(host.terminate(ENV, PID)).rejects.toBeInstanceOf(ClosedError);
    await expect(firstValueFrom(host.environments$)).rejects.toBeInstanceOf(ClosedError);
    await expect(host.events(ENV, PID).next()).rejects.toBeInstanceOf(ClosedError);
    expect(fake.calls).toHaveLength(0);
  });
});
