/**
 * HostClient.events$ in memory (a scripted fetch whose SSE bodies the spec drives): each event once and
 * in order, resumed by seq; a `failed` event, an unmarked hole, a lost process and a refusal as typed
 * errors; `follow: false`; and unsubscribing, which aborts the request, the body and any wait.
 */
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import type { HostProcessEvent, RetryPolicy } from '../../src/client';
import { HostApiError, HostClient } from '../../src/client';
import { VirtualClock } from '../support/virtual-time';
import { eventLine, FakeFetch, frames, HOST_A, HOST_B, networkError, problem, SseBody } from './fake-fetch';

const ENV = 'env-1';
const PID = '11111111-2222-4333-8444-555555555555';
const PATH = `/api/v1/environments/${ENV}/processes/${PID}/events`;

const client = (fake: FakeFetch, retry: Partial<RetryPolicy> = {}): HostClient =>
  new HostClient({ url: 'http://host.test:8080', token: 'unit-spec-token-0123456789', fetch: fake.fetch, retry: { initialDelayMs: 1, maxDelayMs: 4, ...retry }, random: () => 0.5 });

/** Each event as a short line (see `eventLine`). */
const line = (event: HostProcessEvent): string => eventLine(event);

/** Subscribes and collects lines until the stream ends; resolves with them and the error, if any. */
function collect(host: HostClient, options: Parameters<HostClient['events$']>[2] = {}): { readonly lines: string[]; readonly done: Promise<unknown> } {
  const lines: string[] = [];
  const done = new Promise<unknown>((resolve) => host.events$(ENV, PID, options).subscribe({ next: (e) => lines.push(line(e)), error: resolve, complete: () => resolve(undefined) }));
  return { lines, done };
}

const afters = (fake: FakeFetch): (string | null)[] => fake.calls.map((c) => c.url.searchParams.get('after'));

describe('HostClient.events$', () => {
  it('decodes events split anywhere across chunks, sends the token and asks for an event stream', async () => {
    const text = [frames.output(1, 'héllo '), frames.ping(), frames.output(2, 'wörld', 'stderr'), frames.exited(3, 0), frames.closed(4)].join('');
    const body = new SseBody();
    // One byte at a time: every frame, field and line is split.
    for (const byte of new TextEncoder().encode(text)) body.pushBytes(new Uint8Array([byte]));
    const fake = new FakeFetch().reply(body.end());
    const events = await lastValueFrom(client(fake).events$(ENV, PID).pipe(toArray()));
    expect(events.map(line)).toEqual(['output:1:stdout:héllo ', 'output:2:stderr:wörld', 'exited:3:0', 'closed:4']);
    const [call] = fake.calls;
    expect([call?.url.pathname, call?.url.search, call?.headers['authorization'], call?.headers['accept']]).toEqual([PATH, '?after=0', 'Bearer unit-spec-token-0123456789', 'text/event-stream']);
  });

  it('resumes after the last seq it delivered, skips a repeated seq, and completes at closed (nothing after it)', async () => {
    const last = new SseBody(frames.output(3, 'c'), frames.exited(4, 7), frames.closed(5), frames.output(6, 'never'));
    const fake = new FakeFetch().reply(
      new SseBody(frames.output(1, 'a'), frames.output(2, 'b'), frames.output(2, 'b'), 'id: 3\nevent: output\ndata: {"se').fail(),
      networkError(),
      new SseBody(frames.output(2, 'b'), frames.output(3, 'c')).end(),
      last,
    );
    const { lines, done } = collect(client(fake));
    expect(await done).toBeUndefined();
    expect(lines).toEqual(['output:1:stdout:a', 'output:2:stdout:b', 'output:3:stdout:c', 'exited:4:7', 'closed:5']);
    expect(afters(fake)).toEqual(['0', '2', '2', '3']);
    // It stopped reading at closed: the body the host had not ended yet is cancelled.
    expect(last.cancelled).toBe(true);
  });

  it('starts after afterSeq, and a truncated marker lets the seqs jump once', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(10, 'old'), frames.truncated(20, 9), frames.output(20, 'x'), frames.truncated(15, 1), frames.closed(21)).end());
    const { lines, done } = collect(client(fake), { afterSeq: 10 });
    expect(await done).toBeUndefined();
    // A marker that points back (nothing dropped after what it has) changes nothing.
    expect(lines).toEqual(['truncated:20:9', 'output:20:stdout:x', 'closed:21']);
    expect(afters(fake)).toEqual(['10']);
  });

  it("passes on the receipt time of events and a marker's reason, as a host with a data dir sends them, and none where the host sent none", async () => {
    const timedOutput = `id: 1\nevent: output\ndata: ${JSON.stringify({ seq: 1, time: 1_700_000_000_123, stream: 'stdout', chunk: Buffer.from('a').toString('base64') })}\n\n`;
    const quota = `event: truncated\ndata: ${JSON.stringify({ nextSeq: 9, droppedEvents: 7, droppedBytes: 700, reason: 'quota', fromSeq: 2, toSeq: 8 })}\n\n`;
    const timedExited = `id: 9\nevent: exited\ndata: ${JSON.stringify({ seq: 9, time: 1_700_000_000_456, exitCode: 0 })}\n\n`;
    const fake = new FakeFetch().reply(new SseBody(timedOutput, quota, timedExited, frames.closed(10)).end());
    const events = await lastValueFrom(client(fake).events$(ENV, PID).pipe(toArray()));
    expect(events).toEqual([
      { type: 'output', seq: 1, stream: 'stdout', chunk: new Uint8Array([0x61]), time: 1_700_000_000_123 },
      { type: 'truncated', nextSeq: 9, droppedEvents: 7, droppedBytes: 700, reason: 'quota' },
      { type: 'exited', seq: 9, exitCode: 0, time: 1_700_000_000_456 },
      { type: 'closed', seq: 10 },
    ]);
    expect('time' in (events[3] ?? {})).toBe(false);
  });

  it("gives a marker's droppedBytes where the host sent it, and none from a host that sent none (an older one, or a marker of the executor's window)", async () => {
    const counted = `event: truncated\ndata: ${JSON.stringify({ nextSeq: 5, droppedEvents: 4, droppedBytes: 1_048_576 })}\n\n`;
    const fake = new FakeFetch().reply(new SseBody(counted, frames.truncated(9, 4), frames.closed(9)).end());
    const events = await lastValueFrom(client(fake).events$(ENV, PID).pipe(toArray()));
    expect(events).toEqual([
      { type: 'truncated', nextSeq: 5, droppedEvents: 4, droppedBytes: 1_048_576 },
      { type: 'truncated', nextSeq: 9, droppedEvents: 4 },
      { type: 'closed', seq: 9 },
    ]);
    expect('droppedBytes' in (events[1] ?? {})).toBe(false);
  });

  it('errors PROCESS_GAP when a seq is skipped with no truncated marker', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a'), frames.output(3, 'c'), frames.closed(4)).end());
    const { lines, done } = collect(client(fake));
    const error = await done;
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'PROCESS_GAP', message: expect.stringContaining('seq 3 after 1') });
    expect(lines).toEqual(['output:1:stdout:a']);
    expect(fake.calls).toHaveLength(1);
  });

  it('errors with the code of a failed event, after the events before it', async () => {
    const body = new SseBody(frames.output(1, 'a'));
    // Its message's UTF-8 split byte by byte.
    for (const byte of new TextEncoder().encode(frames.failed('RESUME_FAILED', 'the executor lost it — ünïcode'))) body.pushBytes(new Uint8Array([byte]));
    const fake = new FakeFetch().reply(body.push(frames.output(2, 'b')));
    const { lines, done } = collect(client(fake));
    const error = await done;
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'RESUME_FAILED', message: 'the executor lost it — ünïcode' });
    expect(lines).toEqual(['output:1:stdout:a']);
    expect(fake.calls).toHaveLength(1);
  });

  it('errors DECODE_FAILED on an event it cannot read', async () => {
    const fake = new FakeFetch().reply(new SseBody('id: 1\nevent: output\ndata: {"seq":1,"stream":"tty","chunk":""}\n\n'));
    await expect(firstValueFrom(client(fake).events$(ENV, PID))).rejects.toMatchObject({ code: 'DECODE_FAILED' });
  });

  it('errors DECODE_FAILED, once and without reconnecting, on an output chunk that is not standard padded base64; what came before stays delivered', async () => {
    for (const chunk of ['AB*D', 'AB-D', 'AB_D', 'QUJD RA==', 'QUJ', 'QQ==QUJD', 'w6k=\u00e9']) {
      const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a'), `id: 2\nevent: output\ndata: {"seq":2,"stream":"stdout","chunk":"${chunk}"}\n\n`));
      const { lines, done } = collect(client(fake));
      const error = await done;
      expect({ chunk, error: error instanceof HostApiError, code: (error as { code?: unknown }).code, message: (error as { message?: unknown }).message, lines, calls: fake.calls.length }).toEqual({
        chunk,
        error: true,
        code: 'DECODE_FAILED',
        message: 'output event: its chunk is not standard padded base64',
        lines: ['output:1:stdout:a'],
        calls: 1,
      });
    }
  });

  it('decodes every padding of standard base64, and the empty chunk', async () => {
    const texts = ['', 'a', 'ab', 'abc', 'abcd', 'ü+/?', '\u0000\u00ff'];
    const fake = new FakeFetch().reply(new SseBody(...texts.map((text, i) => frames.output(i + 1, text)), frames.closed(texts.length + 1)).end());
    const { lines, done } = collect(client(fake));
    expect(await done).toBeUndefined();
    expect(lines).toEqual([...texts.map((text, i) => `output:${i + 1}:stdout:${text}`), `closed:${texts.length + 1}`]);
  });

  it('follow: false asks for what the host holds and completes when that stream ends', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a'), frames.output(2, 'b')).end());
    const { lines, done } = collect(client(fake), { follow: false });
    expect(await done).toBeUndefined();
    expect(lines).toEqual(['output:1:stdout:a', 'output:2:stdout:b']);
    expect(fake.calls.map((c) => c.url.search)).toEqual(['?after=0&follow=false']);
  });

  it('follow: false does not take a cut for the end: it resumes and completes at the end the host made', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a')).fail(), new SseBody(frames.output(2, 'b')).end());
    const { lines, done } = collect(client(fake), { follow: false });
    expect(await done).toBeUndefined();
    expect(lines).toEqual(['output:1:stdout:a', 'output:2:stdout:b']);
    expect(fake.calls.map((c) => c.url.search)).toEqual(['?after=0&follow=false', '?after=1&follow=false']);
  });

  it('following, a stream the host ended before closed is opened again', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a')).end(), new SseBody(frames.closed(2)).end());
    const { lines, done } = collect(client(fake));
    expect(await done).toBeUndefined();
    expect(lines).toEqual(['output:1:stdout:a', 'closed:2']);
    expect(afters(fake)).toEqual(['0', '1']);
  });
});

describe('HostClient.events$: a host that stops gracefully (event: restart)', () => {
  it('takes the come-back event for a reason to reconnect, not an error: it waits retryMs, then resumes after the last seq (virtual time)', async () => {
    const clock = new VirtualClock();
    const first = new SseBody(frames.output(1, 'a'), frames.output(2, 'b'), frames.restart(2_000), frames.output(3, 'never'));
    // The first stream, then a refused connection (the host is still down), then the host started again.
    const replies = new FakeFetch(clock).reply(first, networkError(), new SseBody(frames.output(3, 'c'), frames.closed(4)).end());
    const host = new HostClient({ url: 'http://host.test:8080', token: 'unit-spec-token-0123456789', fetch: replies.fetch, retry: { initialDelayMs: 1, maxDelayMs: 4 }, random: () => 0.5, scheduler: clock });
    const lines: string[] = [];
    const done = new Promise<unknown>((resolve) => host.events$(ENV, PID).subscribe({ next: (e) => lines.push(line(e)), error: resolve, complete: () => resolve(undefined) }));
    await clock.advance(0);
    expect({ lines, calls: replies.calls.length, cancelled: first.cancelled }).toEqual({ lines: ['output:1:stdout:a', 'output:2:stdout:b'], calls: 1, cancelled: true });
    // Nothing before retryMs.
    await clock.advance(1_999);
    expect(replies.calls).toHaveLength(1);
    await clock.advance(1);
    expect(await clock.run(done)).toBeUndefined();
    expect(lines).toEqual(['output:1:stdout:a', 'output:2:stdout:b', 'output:3:stdout:c', 'closed:4']);
    expect({ afters: afters(replies), reconnectedAt: replies.calls[1]?.at }).toEqual({ afters: ['0', '2', '2'], reconnectedAt: 2_000 });
  });

  it('with follow: false, a come-back event is not the end of what the host holds: it resumes and completes at the real end', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a'), frames.restart(0)).end(), new SseBody(frames.output(2, 'b')).end());
    const { lines, done } = collect(client(fake), { follow: false });
    expect(await done).toBeUndefined();
    expect(lines).toEqual(['output:1:stdout:a', 'output:2:stdout:b']);
    expect(fake.calls.map((c) => c.url.search)).toEqual(['?after=0&follow=false', '?after=1&follow=false']);
  });
});

describe('HostClient.events$: refusals and a lost process', () => {
  it('takes a stream silent past streamIdleMs for a dead connection: drops it and resumes by seq', async () => {
    // The first stream delivers seq 1, then goes silent (no ping, no close): a half-open connection.
    const silent = new SseBody(frames.output(1, 'a'));
    const fake = new FakeFetch().reply(silent, new SseBody(frames.output(2, 'b'), frames.exited(3, 0), frames.closed(4)).end());
    const { lines, done } = collect(client(fake, { streamIdleMs: 30 }));
    expect(await done).toBeUndefined();
    expect(lines).toEqual(['output:1:stdout:a', 'output:2:stdout:b', 'exited:3:0', 'closed:4']);
    expect(afters(fake)).toEqual(['0', '1']);
    expect(silent.cancelled).toBe(true);
  });

  it('a host answering 503 past maxOfflineMs is unreachable (HOST_UNREACHABLE), while 429 only slows it down', async () => {
    const busy = Array.from({ length: 60 }, () => problem(503, 'ENVIRONMENT_FAILED'));
    const { done } = collect(client(new FakeFetch().reply(...busy), { maxOfflineMs: 20 }));
    expect(await done).toMatchObject({ code: 'HOST_UNREACHABLE' });
  });

  it('a process never found is PROCESS_NOT_FOUND, with the status and host instance', async () => {
    const fake = new FakeFetch().reply(problem(404, 'PROCESS_NOT_FOUND'));
    const error = await collect(client(fake)).done;
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'PROCESS_NOT_FOUND', status: 404, hostInstance: HOST_A });
  });

  it('a refusal (401) ends the stream with UNAUTHORIZED, not retried', async () => {
    const fake = new FakeFetch().reply(problem(401, 'UNAUTHORIZED'));
    expect(await collect(client(fake)).done).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    expect(fake.calls).toHaveLength(1);
  });

  it.each(['PROCESS_NOT_FOUND', 'ENVIRONMENT_NOT_FOUND'])('a restarted host (another instance) answering %s is PROCESS_GONE', async (code) => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a')).fail(), networkError(), problem(404, code, { instance: HOST_B }));
    const { lines, done } = collect(client(fake));
    const error = await done;
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'PROCESS_GONE', status: 404, hostInstance: HOST_B, message: expect.stringContaining(HOST_B) });
    expect((error as HostApiError).cause).toMatchObject({ code });
    expect(lines).toEqual(['output:1:stdout:a']);
  });

  it('the same host instance saying it no longer knows the process (released) is not a restart: PROCESS_NOT_FOUND', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a')).fail(), problem(404, 'PROCESS_NOT_FOUND', { instance: HOST_A }));
    expect(await collect(client(fake)).done).toMatchObject({ code: 'PROCESS_NOT_FOUND', hostInstance: HOST_A });
  });

  it('errors HOST_UNREACHABLE once the host stayed unreachable past maxOfflineMs', async () => {
    const fake = new FakeFetch().reply(new SseBody(frames.output(1, 'a')).fail());
    for (let i = 0; i < 1000; i += 1) fake.reply(networkError());
    const started = performance.now();
    const error = await collect(client(fake, { maxOfflineMs: 25 })).done;
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'HOST_UNREACHABLE', message: expect.stringContaining('for over 0.025 s') });
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('HostClient.events$: unsubscribing', () => {
  const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

  it('aborts the request while it waits for an answer', async () => {
    const fake = new FakeFetch();
    const subscription = client(fake).events$(ENV, PID).subscribe();
    await fake.callsMade(1);
    subscription.unsubscribe();
    expect(fake.calls[0]?.signal?.aborted).toBe(true);
  });

  it('aborts the body it reads, and nothing more is asked', async () => {
    const body = new SseBody(frames.output(1, 'a'));
    const fake = new FakeFetch().reply(body);
    const first = await new Promise<string>((resolve) => {
      const subscription = client(fake).events$(ENV, PID).subscribe((event) => {
        subscription.unsubscribe();
        resolve(line(event));
      });
    });
    expect(first).toBe('output:1:stdout:a');
    expect(fake.calls[0]?.signal?.aborted).toBe(true);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(body.cancelled).toBe(true);
    expect(fake.calls).toHaveLength(1);
  });

  it('clears the wait before a retry (no timer left)', async () => {
    const fake = new FakeFetch().reply(problem(503, 'ENVIRONMENT_RECOVERING', { headers: { 'retry-after': '3600' } }));
    const before = timers();
    const subscription = client(fake).events$(ENV, PID).subscribe();
    await fake.callsMade(1);
    while (timers() === before) await new Promise<void>((resolve) => setImmediate(resolve));
    subscription.unsubscribe();
    expect(timers()).toBe(before);
    expect(fake.calls).toHaveLength(1);
  });
});
