/**
 * The reconnect loop under the client's event streams (`runSse`), driven with a scripted fetch: an error
 * thrown while handling an event is the session's own failure, typed and final, never taken for a dropped
 * connection (which would open the same stream again, and fail on the same event, for ever).
 */
import { asyncScheduler } from 'rxjs';
import { HostApiError } from '../../src/client';
import type { HostConnection } from '../../src/client/host-connection';
import { HostUrls } from '../../src/client/host-urls';
import type { RetryPolicy } from '../../src/client/retry';
import { DEFAULT_RETRY_POLICY } from '../../src/client/retry';
import type { SseSession } from '../../src/client/sse-session';
import { refusalOf, runSse } from '../../src/client/sse-session';
import { VirtualClock } from '../support/virtual-time';
import { empty, FakeFetch, frames, networkError, problem, SseBody } from './fake-fetch';

const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, initialDelayMs: 1, maxDelayMs: 4 };

/** A session that reads outputs and throws `thrown` on the second. */
function throwingSession(thrown: unknown): SseSession & { readonly seen: string[] } {
  const seen: string[] = [];
  let last = 0;
  return {
    seen,
    path: () => `/events?after=${last}`,
    onOpen: () => undefined,
    onMessage: (message) => {
      if (message.id === '2') throw thrown;
      seen.push(message.data);
      last = Number(message.id);
    },
    onEnd: () => undefined,
    finished: () => false,
    progress: () => last,
    refusal: refusalOf('events'),
  };
}

/** A session that follows a process's events until `closed`, resuming after the last id it saw. */
function followingSession(): SseSession & { readonly seen: string[] } {
  const seen: string[] = [];
  let last = 0;
  let closed = false;
  return {
    seen,
    path: () => `/events?after=${last}`,
    onOpen: () => undefined,
    onMessage: (message) => {
      seen.push(`${message.event}:${message.id ?? ''}`);
      last = Number(message.id);
      closed ||= message.event === 'closed';
    },
    onEnd: () => undefined,
    finished: () => closed,
    progress: () => last,
    refusal: refusalOf('events'),
  };
}

describe('runSse', () => {
  it('ends with DECODE_FAILED (the cause kept) when handling an event throws a plain error, without opening the stream again', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a'), frames.output(2, 'b')), new SseBody(frames.output(2, 'b')));
    const connection: HostConnection = { urls: new HostUrls('http://host.test'), token: () => 'unit-spec-token-0123456789', fetch: fake.fetch, policy, random: () => 0.5, scheduler: asyncScheduler };
    const cause = new TypeError('boom');
    const session = throwingSession(cause);
    const error = await runSse(connection, 'events', session, new AbortController().signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'DECODE_FAILED', message: 'events: an event could not be handled: boom', cause });
    expect({ seen: session.seen.length, calls: fake.calls.length }).toEqual({ seen: 1, calls: 1 });
  });

  it('passes a HostApiError the handler throws through as it is', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a'), frames.output(2, 'b')));
    const connection: HostConnection = { urls: new HostUrls('http://host.test'), token: () => 'unit-spec-token-0123456789', fetch: fake.fetch, policy, random: () => 0.5, scheduler: asyncScheduler };
    const thrown = new HostApiError('PROCESS_GAP', 'a hole', undefined, undefined);
    await expect(runSse(connection, 'events', throwingSession(thrown), new AbortController().signal)).rejects.toBe(thrown);
    expect(fake.calls).toHaveLength(1);
  });

  it('cuts a stream silent for streamIdleMs on the connection\'s scheduler (virtual time), and opens it again at once after the last seq', async () => {
    const clock = new VirtualClock();
    // The first stream brings seq 1, then goes silent: no ping, no close (a half-open connection).
    const silent = new SseBody(frames.output(1, 'a'));
    const fake = new FakeFetch(clock).reply(silent, new SseBody(frames.output(2, 'b'), frames.closed(3)).end());
    const connection: HostConnection = { urls: new HostUrls('http://host.test'), token: () => 'unit-spec-token-0123456789', fetch: fake.fetch, policy, random: () => 0.5, scheduler: clock };
    const session = followingSession();
    const running = runSse(connection, 'events', session, new AbortController().signal);
    await clock.advance(policy.streamIdleMs - 1);
    expect({ calls: fake.calls.length, cancelled: silent.cancelled, seen: session.seen }).toEqual({ calls: 1, cancelled: false, seen: ['output:1'] });
    await clock.advance(1);
    await clock.run(running);
    expect(silent.cancelled).toBe(true);
    // Cut at exactly streamIdleMs; a cut after progress reconnects with no wait.
    expect(fake.calls.map((c) => [c.at, c.url.searchParams.get('after')])).toEqual([
      [0, '0'],
      [policy.streamIdleMs, '1'],
    ]);
    expect(session.seen).toEqual(['output:1', 'output:2', 'closed:3']);
  });
  it('tells the session why each connection dropped or could not be made (onDrop), and nothing once it is finished', async () => {
    const fake = new FakeFetch().reply(
      networkError(),
      problem(503, 'CLOSED', { headers: { 'retry-after': '0' } }),
      new SseBody(frames.output(1, 'a')).fail(),
      new SseBody(frames.output(2, 'b'), frames.restart(1)),
      empty(502),
      new SseBody(frames.output(3, 'c')).end(),
      new SseBody(frames.closed(4)).end(),
    );
    const connection: HostConnection = { urls: new HostUrls('http://host.test'), token: () => 'unit-spec-token-0123456789', fetch: fake.fetch, policy, random: () => 0.5, scheduler: asyncScheduler };
    const drops: string[] = [];
    const session = { ...followingSession(), onDrop: (reason: string) => void drops.push(reason) };
    await runSse(connection, 'events', session, new AbortController().signal);
    expect(session.seen).toEqual(['output:1', 'output:2', 'output:3', 'closed:4']);
    expect(drops).toEqual([
      'the host is unreachable: fetch failed (connect ECONNREFUSED 127.0.0.1:9)',
      'the host is busy (HTTP 503)',
      'the connection dropped: terminated',
      'the host is restarting',
      'a gateway could not reach the host (HTTP 502)',
      'the host ended the stream',
    ]);
  });
});
