/**
 * HostClient's credentials that refresh, in memory (a scripted fetch, no socket): a token function (sync
 * or async) is asked before each attempt of a call and each (re)connection of an event stream, so a
 * refreshed token is used on the next one; a function that throws or rejects fails the call (or ends the
 * stream) with its own error, at once, and nothing is sent.
 */
import { firstValueFrom, toArray, take } from 'rxjs';
import type { HostClientOptions } from '../../src/client';
import { HostClient } from '../../src/client';
import { empty, FakeFetch, frames, json, networkError, SseBody } from './fake-fetch';

const ENV = 'env-1';
const PID = '11111111-2222-4333-8444-555555555555';

function client(fake: FakeFetch, token: HostClientOptions['token']): HostClient {
  return new HostClient({ url: 'http://host.test:8080', token, fetch: fake.fetch, retry: { initialDelayMs: 1, maxDelayMs: 4, jitter: 0.5 }, random: () => 0.5 });
}

/** A token function that gives `token-1`, `token-2` … and counts its calls. */
function refreshing(): { readonly token: () => Promise<string>; readonly calls: () => number } {
  let calls = 0;
  return {
    token: async () => {
      calls += 1;
      await Promise.resolve();
      return `token-${calls}`;
    },
    calls: () => calls,
  };
}

const overview = (n: number): string => `event: overview\ndata: ${JSON.stringify({ hostInstance: 'h', environments: [{ id: `env-${n}`, generation: 1, state: 'connected', error: null, info: null, processCount: 0, processes: [] }] })}\n\n`;

describe('HostClient tokens', () => {
  it('asks an async token function before each attempt: a retry sends the refreshed token', async () => {
    const fake = new FakeFetch().reply(empty(502), networkError(), json(200, { running: true }));
    const tokens = refreshing();
    expect(await client(fake, tokens.token).terminate(ENV, PID)).toBe(true);
    expect(fake.calls.map((c) => c.headers['authorization'])).toEqual(['Bearer token-1', 'Bearer token-2', 'Bearer token-3']);
    expect(tokens.calls()).toBe(3);
  });

  it('asks it again at each reconnection of an event stream', async () => {
    const first = new SseBody(frames.output(1, 'a'));
    const second = new SseBody(frames.output(2, 'b'), frames.exited(3, 0), frames.closed(4)).end();
    const fake = new FakeFetch().reply(first, second);
    const tokens = refreshing();
    const events = firstValueFrom(client(fake, tokens.token).events$(ENV, PID).pipe(toArray()));
    await fake.callsMade(1);
    first.fail();
    expect((await events).map((e) => e.type)).toEqual(['output', 'output', 'exited', 'closed']);
    expect(fake.calls.map((c) => c.headers['authorization'])).toEqual(['Bearer token-1', 'Bearer token-2']);
  });

  it('the overview stream reconnects with the refreshed token too', async () => {
    const first = new SseBody(overview(1));
    const fake = new FakeFetch().reply(first, new SseBody(overview(2)));
    const tokens = refreshing();
    const lists = firstValueFrom(client(fake, tokens.token).environments$.pipe(take(2), toArray()));
    await fake.callsMade(1);
    first.fail();
    expect((await lists).map((list) => list[0]?.id)).toEqual(['env-1', 'env-2']);
    expect(fake.calls.map((c) => c.headers['authorization'])).toEqual(['Bearer token-1', 'Bearer token-2']);
  });

  it('a token function that rejects fails the call with its error, and sends nothing', async () => {
    const fake = new FakeFetch().reply(json(200, { running: true }));
    const failure = new Error('the vault is sealed');
    await expect(client(fake, () => Promise.reject(failure)).terminate(ENV, PID)).rejects.toBe(failure);
    expect(fake.calls).toHaveLength(0);
  });

  it('a token function that throws ends an event stream with its error, and sends nothing', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.closed(1)).end());
    const failure = new Error('no token today');
    const thrower = (): string => {
      throw failure;
    };
    await expect(firstValueFrom(client(fake, thrower).events$(ENV, PID))).rejects.toBe(failure);
    await expect(firstValueFrom(client(fake, thrower).environments$)).rejects.toBe(failure);
    expect(fake.calls).toHaveLength(0);
  });

  it('a token function that fails on a reconnection ends the stream with its error', async () => {
    const first = new SseBody(frames.output(1, 'a'));
    const fake = new FakeFetch().reply(first);
    let calls = 0;
    const failure = new Error('expired for good');
    const token = (): Promise<string> => (++calls === 1 ? Promise.resolve('token-1') : Promise.reject(failure));
    const seen: string[] = [];
    const ended = new Promise<unknown>((resolve) => client(fake, token).events$(ENV, PID).subscribe({ next: (e) => seen.push(e.type), error: resolve, complete: () => resolve('completed') }));
    await fake.callsMade(1);
    first.fail();
    expect(await ended).toBe(failure);
    expect(seen).toEqual(['output']);
    expect(fake.calls).toHaveLength(1);
  });
});
