/**
 * HostClient.eventStream and HostClient.events in memory (a scripted fetch whose SSE bodies the spec
 * drives, each read of a body counted): a consumer that does not pull holds the client to the high-water
 * mark (no read of the body beyond it), pulling resumes the reads, a cut while the consumer is behind
 * resumes by seq with no loss and no duplicate, the idle cut does not take the consumer's pause for a
 * silent host, and an end or a failure comes after every event before it.
 */
import type { HostProcessEvent, RetryPolicy } from '../../src/client';
import { HostApiError, HostClient } from '../../src/client';
import { settle, VirtualClock } from '../support/virtual-time';
import type { FakeCall } from './fake-fetch';
import { eventLine, FakeFetch, frames, SseBody } from './fake-fetch';

const ENV = 'env-1';
const PID = '11111111-2222-4333-8444-555555555555';

const client = (fake: FakeFetch, retry: Partial<RetryPolicy> = {}, scheduler?: VirtualClock): HostClient =>
  new HostClient({ url: 'http://host.test:8080', token: 'unit-spec-token-0123456789', fetch: fake.fetch, retry: { initialDelayMs: 1, maxDelayMs: 4, ...retry }, random: () => 0.5, ...(scheduler === undefined ? {} : { scheduler }) });

/** Each event as a short line (see `eventLine`). */
const line = (event: HostProcessEvent): string => eventLine(event, false);

/** A body with one chunk per frame: outputs `from`..`to` (text `o<seq>`), then nothing more unless the spec adds it. */
const outputs = (from: number, to: number): SseBody => {
  const body = new SseBody();
  for (let seq = from; seq <= to; seq += 1) body.push(frames.output(seq, `o${seq}`));
  return body;
};

const expectedOutputs = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `output:${from + i}:o${from + i}`);

/** Reads `stream` to its end, one event per event-loop turn; resolves with the lines and the error, if any. */
async function drain(reader: ReadableStreamDefaultReader<HostProcessEvent>, lines: string[]): Promise<unknown> {
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) return undefined;
      lines.push(line(next.value));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } catch (error: unknown) {
    return error;
  }
}

const afters = (fake: FakeFetch): (string | null)[] => fake.calls.map((c) => c.url.searchParams.get('after'));

describe('HostClient.eventStream: backpressure', () => {
  it('reads the body no further than the high-water mark while the consumer does not pull, and reads on as it pulls', async () => {
    const body = outputs(1, 40).push(frames.closed(41)).end();
    const fake = new FakeFetch().reply(body);
    const reader = client(fake).eventStream(ENV, PID, { highWaterMark: 4 }).getReader();
    await fake.callsMade(1);
    await settle();
    await settle();
    // One event per chunk: 4 reads filled the queue, and nothing more is read however long it waits.
    expect(body.reads).toBe(4);
    await settle();
    expect(body.reads).toBe(4);

    // Each event taken makes room for one more read, no more.
    const first = await reader.read();
    expect(first.done === false && line(first.value)).toBe('output:1:o1');
    await settle();
    expect(body.reads).toBe(5);
    const lines = ['output:1:o1'];
    for (let i = 0; i < 3; i += 1) {
      const next = await reader.read();
      if (!next.done) lines.push(line(next.value));
    }
    await settle();
    expect(body.reads).toBe(8);

    // Pulling on reads it all, in order, and the stream closes after closed.
    expect(await drain(reader, lines)).toBeUndefined();
    expect(lines).toEqual([...expectedOutputs(1, 40), 'closed:41']);
    expect(fake.calls).toHaveLength(1);
  });

  it('with highWaterMark 0, reads the body only while a read waits', async () => {
    const body = outputs(1, 3).push(frames.closed(4)).end();
    const fake = new FakeFetch().reply(body);
    const reader = client(fake).eventStream(ENV, PID, { highWaterMark: 0 }).getReader();
    await fake.callsMade(1);
    await settle();
    expect(body.reads).toBe(0);
    const first = await reader.read();
    expect(first.done === false && line(first.value)).toBe('output:1:o1');
    await settle();
    expect(body.reads).toBe(1);
    const lines = ['output:1:o1'];
    expect(await drain(reader, lines)).toBeUndefined();
    expect(lines).toEqual([...expectedOutputs(1, 3), 'closed:4']);
  });

  it('a cut while the consumer is behind resumes after the last seq read ahead: no event lost, none twice', async () => {
    // The first body brings 1..10 then breaks; the host answers a resume with what follows the seq asked
    // for, repeating the two before it (a repeat the client must skip).
    const first = outputs(1, 10).fail();
    const resumed = (call: FakeCall): SseBody => {
      const after = Number(call.url.searchParams.get('after'));
      return outputs(after - 1, 20).push(frames.exited(21, 0)).push(frames.closed(22)).end();
    };
    const fake = new FakeFetch().reply(first, resumed);
    const reader = client(fake).eventStream(ENV, PID, { highWaterMark: 2 }).getReader();
    await fake.callsMade(1);
    await settle();
    // The consumer has not read: the client read 2 chunks and has not seen the cut yet.
    expect({ reads: first.reads, calls: fake.calls.length }).toEqual({ reads: 2, calls: 1 });

    const lines: string[] = [];
    expect(await drain(reader, lines)).toBeUndefined();
    expect(lines).toEqual([...expectedOutputs(1, 20), 'exited:21:0', 'closed:22']);
    expect(afters(fake)).toEqual(['0', '10']);
  });

  it('an end or a failure comes after every event before it, however far behind the consumer is', async () => {
    const fake = new FakeFetch().reply(outputs(1, 5).push(frames.failed('RESUME_FAILED', 'the executor lost it')));
    const reader = client(fake).eventStream(ENV, PID, { highWaterMark: 8 }).getReader();
    await fake.callsMade(1);
    // The failure was read before the consumer took anything.
    await settle();
    await settle();
    const lines: string[] = [];
    const error = await drain(reader, lines);
    expect(lines).toEqual(expectedOutputs(1, 5));
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'RESUME_FAILED', message: 'the executor lost it' });
  });

  it('does not take the consumer\'s pause for a silent host: no idle cut while it waits for room (virtual time)', async () => {
    const clock = new VirtualClock();
    const body = outputs(1, 3).push(frames.closed(4)).end();
    const fake = new FakeFetch(clock).reply(body);
    const reader = client(fake, { streamIdleMs: 1_000 }, clock).eventStream(ENV, PID, { highWaterMark: 1 }).getReader();
    await clock.advance(0);
    expect(body.reads).toBe(1);
    // Ten idle bounds with the consumer away: the stream stays open, nothing more is read.
    await clock.advance(10_000);
    expect({ reads: body.reads, cancelled: body.cancelled, calls: fake.calls.length }).toEqual({ reads: 1, cancelled: false, calls: 1 });
    const lines: string[] = [];
    for (;;) {
      const next = await clock.run(reader.read());
      if (next.done) break;
      lines.push(line(next.value));
    }
    expect(lines).toEqual([...expectedOutputs(1, 3), 'closed:4']);
    expect(fake.calls).toHaveLength(1);
  });

  it('still cuts a host that goes silent while the consumer keeps up (virtual time)', async () => {
    const clock = new VirtualClock();
    const silent = outputs(1, 1);
    const fake = new FakeFetch(clock).reply(silent, new SseBody(frames.output(2, 'o2'), frames.closed(3)).end());
    const reader = client(fake, { streamIdleMs: 1_000 }, clock).eventStream(ENV, PID, { highWaterMark: 1 }).getReader();
    const first = await clock.run(reader.read());
    expect(first.done === false && line(first.value)).toBe('output:1:o1');
    // The consumer waits for more: the silence is the host's, cut at streamIdleMs and resumed after seq 1.
    const second = reader.read();
    await clock.advance(999);
    expect(fake.calls).toHaveLength(1);
    await clock.advance(1);
    const next = await clock.run(second);
    expect(next.done === false && line(next.value)).toBe('output:2:o2');
    expect({ cancelled: silent.cancelled, afters: afters(fake) }).toEqual({ cancelled: true, afters: ['0', '1'] });
  });
});

describe('HostClient.events and the stream\'s end', () => {
  it('iterates with for await, and a break cancels the body and aborts the request', async () => {
    const body = outputs(1, 10);
    const fake = new FakeFetch().reply(body);
    const lines: string[] = [];
    for await (const event of client(fake).events(ENV, PID, { highWaterMark: 2 })) {
      lines.push(line(event));
      if (lines.length === 3) break;
    }
    expect(lines).toEqual(expectedOutputs(1, 3));
    expect(fake.calls[0]?.signal?.aborted).toBe(true);
    await settle();
    expect(body.cancelled).toBe(true);
    // Three taken, two read ahead at most, one more for the room the third made.
    expect(body.reads).toBeLessThanOrEqual(6);
  });

  it('cancelling the stream aborts the request and the wait for room', async () => {
    const body = outputs(1, 10);
    const fake = new FakeFetch().reply(body);
    const stream = client(fake).eventStream(ENV, PID, { highWaterMark: 1 });
    await fake.callsMade(1);
    await settle();
    await stream.cancel();
    await settle();
    expect({ aborted: fake.calls[0]?.signal?.aborted, cancelled: body.cancelled, reads: body.reads, calls: fake.calls.length }).toEqual({ aborted: true, cancelled: true, reads: 1, calls: 1 });
  });

  it('an abort of options.signal rejects the read that waits with signal.reason and aborts the request', async () => {
    const fake = new FakeFetch();
    const abort = new AbortController();
    const reader = client(fake).eventStream(ENV, PID, { signal: abort.signal }).getReader();
    await fake.callsMade(1);
    const read = reader.read();
    abort.abort();
    await expect(read).rejects.toBe(abort.signal.reason);
    expect(fake.calls[0]?.signal?.aborted).toBe(true);
    // Already aborted: the stream errors at once, and no request is made.
    const none = new FakeFetch();
    await expect(client(none).eventStream(ENV, PID, { signal: abort.signal }).getReader().read()).rejects.toBe(abort.signal.reason);
    expect(none.calls).toHaveLength(0);
  });

  it('refuses a high-water mark that is not a whole number >= 0', () => {
    const host = client(new FakeFetch());
    for (const highWaterMark of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => host.eventStream(ENV, PID, { highWaterMark })).toThrow(RangeError);
    }
  });
});
