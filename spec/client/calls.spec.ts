/**
 * HostClient's calls, in memory (a scripted fetch, no socket): which failures are retried and which
 * are not, the Idempotency-Key and writeId that make retries safe, problem+json as typed errors, and
 * the AbortSignal of each call. Retry policies are tiny (1–5 ms), so the real timers stay short; the
 * bound on being unreachable is measured in virtual time (a VirtualClock as the client's scheduler), so
 * a busy machine cannot stretch one of its waits past the whole bound.
 */
import type { SchedulerLike } from 'rxjs';
import { ExecClientError, HostApiError, HostClient } from '../../src/client';
import { VirtualClock } from '../support/virtual-time';
import { empty, FakeFetch, HOST_A, json, networkError, problem, SseBody } from './fake-fetch';

const ENV = 'env-1';
const PID = '11111111-2222-4333-8444-555555555555';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PROCESS = { id: PID, environmentId: ENV, argv: ['/bin/true'], tty: false, pipeStdin: false, state: 'running', exitCode: null, error: null };

function client(fake: FakeFetch, retry: Partial<{ maxOfflineMs: number }> = {}, scheduler?: SchedulerLike): HostClient {
  return new HostClient({
    url: 'http://host.test:8080/',
    token: 'unit-spec-token-0123456789',
    fetch: fake.fetch,
    retry: { initialDelayMs: 1, maxDelayMs: 4, jitter: 0.5, ...retry },
    random: () => 0.5,
    ...(scheduler === undefined ? {} : { scheduler }),
  });
}

describe('HostClient calls', () => {
  it('start: one Idempotency-Key per call, the same across its own retries (network error, 502, then 201)', async () => {
    const fake = new FakeFetch().reply(networkError(), empty(502), json(201, PROCESS), json(201, { ...PROCESS, id: 'other' }));
    const host = client(fake);
    const first = await host.start(ENV, { argv: ['/bin/true'], cwd: '/tmp' });
    expect(first).toEqual(PROCESS);
    const keys = fake.calls.map((c) => c.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(UUID);
    expect(new Set(keys).size).toBe(1);
    expect(fake.calls.map((c) => [c.method, c.url.pathname, c.headers['authorization'], c.headers['content-type']])).toEqual(
      Array.from({ length: 3 }, () => ['POST', `/api/v1/environments/${ENV}/processes`, 'Bearer unit-spec-token-0123456789', 'application/json']),
    );
    expect(fake.calls.map((c) => c.body)).toEqual(Array.from({ length: 3 }, () => ({ argv: ['/bin/true'], cwd: '/tmp' })));
    // The next call is another start: another key.
    await host.start(ENV, { argv: ['/bin/true'] });
    expect(fake.calls[3]?.headers['idempotency-key']).toMatch(UUID);
    expect(fake.calls[3]?.headers['idempotency-key']).not.toBe(keys[0]);
  });

  it('start: a given Idempotency-Key is the one sent', async () => {
    const fake = new FakeFetch().reply(empty(504), json(200, PROCESS));
    await client(fake).start(ENV, { argv: ['/bin/true'] }, { idempotencyKey: 'my-key-1' });
    expect(fake.calls.map((c) => c.headers['idempotency-key'])).toEqual(['my-key-1', 'my-key-1']);
  });

  it('write: the same writeId across its retries, a new one per call; the bytes as base64', async () => {
    const fake = new FakeFetch().reply(networkError(), empty(502), json(200, { status: 'written' }), json(200, { status: 'written' }));
    const host = client(fake);
    await host.write(ENV, PID, new Uint8Array([0, 1, 254, 255]));
    await host.write(ENV, PID, 'héllo');
    const bodies = fake.calls.map((c) => c.body as { writeId: string; data: string });
    expect(bodies.map((b) => b.data)).toEqual(['AAH+/w==', 'AAH+/w==', 'AAH+/w==', Buffer.from('héllo').toString('base64')]);
    expect(bodies[0]?.writeId).toMatch(UUID);
    expect(new Set(bodies.slice(0, 3).map((b) => b.writeId)).size).toBe(1);
    expect(bodies[3]?.writeId).not.toBe(bodies[0]?.writeId);
    expect(fake.calls[0]?.url.pathname).toBe(`/api/v1/environments/${ENV}/processes/${PID}/stdin`);
  });

  it('interrupt: not sent again after a network error (the host may have acted), rejects HOST_UNREACHABLE', async () => {
    const fake = new FakeFetch().reply(networkError(), json(202, { status: 'interrupted' }));
    const error = await client(fake).interrupt(ENV, PID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'HOST_UNREACHABLE', status: undefined });
    expect(fake.calls).toHaveLength(1);
  });

  it('interrupt: sent again after 503 and 429 (the host said it did not act)', async () => {
    const fake = new FakeFetch().reply(problem(503, 'ENVIRONMENT_RECOVERING'), problem(429, 'RATE_LIMITED'), json(200, { status: 'interrupted' }));
    await client(fake).interrupt(ENV, PID);
    expect(fake.calls.map((c) => `${c.method} ${c.url.pathname}`)).toEqual(Array.from({ length: 3 }, () => `POST /api/v1/environments/${ENV}/processes/${PID}/interrupt`));
  });

  it('a host answering 503 on and on fails the call at maxOfflineMs (HOST_UNREACHABLE, the host\'s answer as its cause); 429 only slows it down', async () => {
    const clock = new VirtualClock();
    // A host asking to come back in an hour, again and again: the call settles when the bound runs out.
    const busy = Array.from({ length: 5 }, () => problem(503, 'ENVIRONMENT_RECOVERING', { headers: { 'retry-after': '3600' } }));
    const fake = new FakeFetch(clock).reply(...busy);
    const outcome = client(fake, { maxOfflineMs: 90_000 }, clock)
      .wait(ENV, PID)
      .catch((error: unknown) => error);
    await clock.advance(89_999);
    expect(fake.calls).toHaveLength(1);
    await clock.advance(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'HOST_UNREACHABLE', message: expect.stringContaining('for over 90 s') });
    expect((error as HostApiError).cause).toMatchObject({ code: 'ENVIRONMENT_RECOVERING', status: 503 });
    expect(fake.calls).toHaveLength(2);

    // 429 says the host acts, only not now: past the same bound the call still waits, then succeeds.
    const limited = new FakeFetch(clock).reply(...Array.from({ length: 3 }, () => problem(429, 'RATE_LIMITED', { headers: { 'retry-after': '60' } })), json(200, { status: 'interrupted' }));
    const interrupted = client(limited, { maxOfflineMs: 90_000 }, clock).interrupt(ENV, PID);
    await clock.advance(180_000);
    await expect(interrupted).resolves.toBeUndefined();
    expect(limited.calls).toHaveLength(4);
  });

  it('interrupt: resolves on 200 (this host) and on 202 (an older host, which answered interrupt 202)', async () => {
    const fake = new FakeFetch().reply(json(200, { status: 'interrupted' }), json(202, { status: 'interrupted' }));
    const host = client(fake);
    await host.interrupt(ENV, PID);
    await host.interrupt(ENV, PID);
    expect(fake.calls).toHaveLength(2);
  });

  it('endStdin, terminate, resize, release: retried after network errors; terminate says whether it ran', async () => {
    const fake = new FakeFetch().reply(networkError(), json(200, { status: 'ended' }), empty(502), json(200, { running: true }), json(200, { running: false }));
    const host = client(fake);
    await host.endStdin(ENV, PID);
    expect(await host.terminate(ENV, PID)).toBe(true);
    expect(await host.terminate(ENV, PID)).toBe(false);
    fake.reply(networkError(), json(200, { rows: 30, cols: 100 }), networkError(), empty(204), problem(404, 'PROCESS_NOT_FOUND'));
    await host.resize(ENV, PID, { rows: 30, cols: 100 });
    await host.release(ENV, PID);
    // A process already gone counts as released.
    await host.release(ENV, PID);
    expect(fake.calls.map((c) => `${c.method} ${c.url.pathname.split('/').slice(7).join('/') || '-'}`)).toEqual([
      'POST stdin/end', 'POST stdin/end', 'POST terminate', 'POST terminate', 'POST terminate', 'POST resize', 'POST resize', 'DELETE -', 'DELETE -', 'DELETE -',
    ]);
    expect(fake.calls[5]?.body).toEqual({ rows: 30, cols: 100 });
  });

  it('problem+json becomes a HostApiError with its code, status and host instance; other answers by status', async () => {
    const fake = new FakeFetch().reply(
      problem(404, 'PROCESS_NOT_FOUND'),
      problem(422, 'SPAWN_FAILED', { instance: 'c0c0c0c0-0000-4000-8000-00000000000c' }),
      empty(401),
      new Response('<html>oops</html>', { status: 500, headers: { 'content-type': 'text/html' } }),
      json(409, { not: 'a problem' }),
    );
    const host = client(fake);
    const errors = [
      await host.terminate(ENV, PID).catch((e: unknown) => e),
      await host.start(ENV, { argv: ['/nope'] }).catch((e: unknown) => e),
      await host.endStdin(ENV, PID).catch((e: unknown) => e),
      await host.endStdin(ENV, PID).catch((e: unknown) => e),
      await host.endStdin(ENV, PID).catch((e: unknown) => e),
    ];
    for (const error of errors) expect(error).toBeInstanceOf(HostApiError);
    expect(errors.map((e) => ({ ...(e as HostApiError), message: (e as HostApiError).message }))).toEqual([
      expect.objectContaining({ code: 'PROCESS_NOT_FOUND', status: 404, hostInstance: HOST_A, message: expect.stringContaining('detail of PROCESS_NOT_FOUND'), detail: 'detail of PROCESS_NOT_FOUND' }),
      expect.objectContaining({ code: 'SPAWN_FAILED', status: 422, hostInstance: 'c0c0c0c0-0000-4000-8000-00000000000c', detail: 'detail of SPAWN_FAILED' }),
      expect.objectContaining({ code: 'UNAUTHORIZED', status: 401, hostInstance: undefined, detail: undefined }),
      expect.objectContaining({ code: 'HOST_ERROR', status: 500, detail: undefined }),
      expect.objectContaining({ code: 'HOST_ERROR', status: 409, hostInstance: HOST_A, detail: undefined }),
    ]);
    // None of them is retried: the host answered.
    expect(fake.calls).toHaveLength(5);
  });

  it('a start answered with something that is not a process rejects DECODE_FAILED', async () => {
    const fake = new FakeFetch().reply(json(201, { id: 3 }));
    await expect(client(fake).start(ENV, { argv: ['/bin/true'] })).rejects.toMatchObject({ code: 'DECODE_FAILED', status: 201, hostInstance: HOST_A });
  });

  it('gives up HOST_UNREACHABLE once the host stayed unreachable past maxOfflineMs (virtual time)', async () => {
    const clock = new VirtualClock();
    const fake = new FakeFetch(clock);
    for (let i = 0; i < 1000; i += 1) fake.reply(i % 2 === 0 ? networkError() : empty(502));
    const started = clock.now();
    const error = await clock.run(client(fake, { maxOfflineMs: 30 }, clock).write(ENV, PID, 'x').catch((e: unknown) => e));
    const elapsed = clock.now() - started;
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'HOST_UNREACHABLE', message: expect.stringContaining('for over 0.03 s') });
    expect(elapsed).toBeGreaterThanOrEqual(30);
    expect(elapsed).toBeLessThan(1_000);
    expect(fake.calls.length).toBeGreaterThan(3);
    expect(new Set(fake.calls.map((c) => (c.body as { writeId: string }).writeId)).size).toBe(1);
  });
});

describe('HostClient calls: AbortSignal', () => {
  type Call = (host: HostClient, signal: AbortSignal) => Promise<unknown>;
  const calls: readonly (readonly [string, Call])[] = [
    ['start', (host, signal) => host.start(ENV, { argv: ['/bin/true'] }, { signal })],
    ['write', (host, signal) => host.write(ENV, PID, 'x', { signal })],
    ['endStdin', (host, signal) => host.endStdin(ENV, PID, { signal })],
    ['interrupt', (host, signal) => host.interrupt(ENV, PID, { signal })],
    ['terminate', (host, signal) => host.terminate(ENV, PID, { signal })],
    ['resize', (host, signal) => host.resize(ENV, PID, { rows: 2, cols: 3 }, { signal })],
    ['release', (host, signal) => host.release(ENV, PID, { signal })],
  ];

  it.each(calls)('%s: aborting while the request is out rejects with signal.reason (an AbortError DOMException), and nothing is sent again', async (_name, call) => {
    const fake = new FakeFetch();
    const abort = new AbortController();
    const pending = call(client(fake), abort.signal).catch((e: unknown) => e);
    await fake.callsMade(1);
    abort.abort();
    const error = await pending;
    expect(error).toBe(abort.signal.reason);
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(error).not.toBeInstanceOf(ExecClientError);
    expect(fake.calls[0]?.signal?.aborted).toBe(true);
    expect(fake.calls).toHaveLength(1);
  });

  it.each(calls)('%s: aborting during the wait before a retry rejects with the custom reason at once and clears the timer', async (_name, call) => {
    // A 503 asking to come back in an hour: only the abort can end the wait.
    const fake = new FakeFetch().reply(problem(503, 'ENVIRONMENT_RECOVERING', { headers: { 'retry-after': '3600' } }));
    const abort = new AbortController();
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const pending = call(client(fake), abort.signal).catch((e: unknown) => e);
    await fake.callsMade(1);
    while (timers() === before) await new Promise<void>((resolve) => setImmediate(resolve));
    const started = performance.now();
    const reason = new Error('the caller gave up');
    abort.abort(reason);
    expect(await pending).toBe(reason);
    expect(performance.now() - started).toBeLessThan(500);
    expect(timers()).toBe(before);
    expect(fake.calls).toHaveLength(1);
  });

  it('an already aborted signal rejects with its reason and retries nothing', async () => {
    const fake = new FakeFetch().reply(json(201, PROCESS));
    const abort = new AbortController();
    abort.abort('not any more');
    await expect(client(fake).start(ENV, { argv: ['/bin/true'] }, { signal: abort.signal })).rejects.toBe('not any more');
    expect(fake.calls.length).toBeLessThanOrEqual(1);
  });

  it('aborting while the answer body is read rejects with signal.reason too', async () => {
    const body = new SseBody('{"running":');
    const fake = new FakeFetch().reply(new Response(body.stream, { status: 200, headers: { 'content-type': 'application/json' } }));
    const abort = new AbortController();
    const pending = client(fake).terminate(ENV, PID, { signal: abort.signal }).catch((e: unknown) => e);
    await fake.callsMade(1);
    await new Promise<void>((resolve) => setImmediate(resolve));
    abort.abort();
    body.abort();
    expect(await pending).toBe(abort.signal.reason);
    expect(fake.calls).toHaveLength(1);
  });
});

describe('HostClient calls: answers that break', () => {
  it('a 2xx answer that is not JSON rejects DECODE_FAILED (typed), not a SyntaxError', async () => {
    const fake = new FakeFetch().reply(new Response('<html>', { status: 200, headers: { 'exec-rx-host-instance': HOST_A } }));
    const error = await client(fake).terminate(ENV, PID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'DECODE_FAILED', status: 200, hostInstance: HOST_A });
  });

  it('a connection that drops while a 2xx answer is read is no answer: an idempotent call is sent again', async () => {
    const broken = new SseBody('{"runn').fail();
    const fake = new FakeFetch().reply(new Response(broken.stream, { status: 200 }), json(200, { running: true }));
    expect(await client(fake).terminate(ENV, PID)).toBe(true);
    expect(fake.calls).toHaveLength(2);
  });

  it('... and an interrupt is not (the host may have acted): HOST_UNREACHABLE', async () => {
    const broken = new SseBody('{"sta').fail();
    const fake = new FakeFetch().reply(new Response(broken.stream, { status: 202 }), json(202, { status: 'interrupted' }));
    await expect(client(fake).interrupt(ENV, PID)).rejects.toMatchObject({ code: 'HOST_UNREACHABLE' });
    expect(fake.calls).toHaveLength(1);
  });
});
