/**
 * HostClient's binary event stream in memory (a scripted fetch answering with frames the host's own
 * encoder made, `host/api/binary-frames.ts`): every kind of event comes out as the SSE stream gives it,
 * whatever the chunks' boundaries; the Accept it sends; an SSE answer to a binary ask is read as SSE; a
 * corrupt frame ends the attempt with a typed reason and the stream resumes by seq; a cut frame is dropped
 * whole and resumed; a binary answer nobody asked for is DECODE_FAILED.
 */
import { lastValueFrom, toArray } from 'rxjs';
import type { HostProcessEvent } from '../../src/client';
import { HostApiError, HostClient } from '../../src/client';
import { BINARY_FRAMING } from '../../src/host/api/binary-frames';
import type { LogEvent } from '../../src/store/log-events';
import { truncatedRange } from '../../src/store/log-events';
import { bytesOf } from './binary-bytes';
import { FakeFetch, frames, SseBody } from './fake-fetch';

const ENV = 'env-1';
const PID = '11111111-2222-4333-8444-555555555555';
const MEDIA = 'application/vnd.exec-rx.events';

const client = (fake: FakeFetch, binaryEvents = true): HostClient =>
  new HostClient({ url: 'http://host.test:8080', token: 'unit-spec-token-0123456789', fetch: fake.fetch, retry: { initialDelayMs: 1, maxDelayMs: 4 }, random: () => 0.5, binaryEvents });


const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const out = (seq: number, s: string, stream: 'stdout' | 'stderr' | 'pty' = 'stdout', time?: number): LogEvent =>
  ({ type: 'output', seq, stream, chunk: text(s), time: time ?? 1_700_000_000_000 + seq }) as LogEvent;
const logFrame = (event: LogEvent): Uint8Array => bytesOf(BINARY_FRAMING.logEvent(event, false));

/** A binary body of `frameBytes`, pushed in pieces of `piece` bytes (0: each frame whole). */
function body(frameBytes: readonly Uint8Array[], piece = 0): SseBody {
  const b = new SseBody().binary();
  const all = Buffer.concat(frameBytes);
  if (piece === 0) for (const f of frameBytes) b.pushBytes(f);
  else for (let at = 0; at < all.byteLength; at += piece) b.pushBytes(all.subarray(at, at + piece));
  return b;
}

const events = (host: HostClient, afterSeq = 0): Promise<HostProcessEvent[]> => lastValueFrom(host.events$(ENV, PID, { afterSeq }).pipe(toArray()));

describe('HostClient binary event stream', () => {
  const kinds: readonly LogEvent[] = [
    out(1, 'héllo '),
    out(2, 'wörld', 'stderr'),
    out(3, '\u001b[1mbold', 'pty'),
    truncatedRange('quota', 4, 9, 600),
    { type: 'exited', seq: 10, exitCode: 3, sandboxDenied: false, time: 1_700_000_000_010 },
    { type: 'closed', seq: 11, time: 1_700_000_000_011 },
  ];
  const expected: HostProcessEvent[] = [
    { type: 'output', seq: 1, stream: 'stdout', chunk: text('héllo '), time: 1_700_000_000_001 },
    { type: 'output', seq: 2, stream: 'stderr', chunk: text('wörld'), time: 1_700_000_000_002 },
    { type: 'output', seq: 3, stream: 'pty', chunk: text('\u001b[1mbold'), time: 1_700_000_000_003 },
    { type: 'truncated', nextSeq: 10, droppedEvents: 6, droppedBytes: 600, reason: 'quota' },
    { type: 'exited', seq: 10, exitCode: 3, time: 1_700_000_000_010 },
    { type: 'closed', seq: 11, time: 1_700_000_000_011 },
  ];

  it.each([0, 1, 3, 8, 13, 64])('gives every kind of event as SSE gives it, pushed in pieces of %i bytes (0: whole frames), pings and notices skipped', async (piece) => {
    const all = [...kinds.slice(0, 2).map(logFrame), bytesOf(BINARY_FRAMING.ping()), ...kinds.slice(2, 4).map(logFrame), bytesOf(BINARY_FRAMING.revoked()), ...kinds.slice(4).map(logFrame)];
    const fake = new FakeFetch().reply(body(all, piece).end());
    expect(await events(client(fake))).toEqual(expected);
    expect(fake.calls[0]?.headers['accept']).toBe(`${MEDIA}, text/event-stream;q=0.5`);
  });

  it('gives a live event (no time) without a time, as SSE does', async () => {
    const live = bytesOf(BINARY_FRAMING.event({ type: 'output', seq: 1, stream: 'stdout', chunk: text('a') }));
    const closed = bytesOf(BINARY_FRAMING.event({ type: 'closed', seq: 2 }));
    const fake = new FakeFetch().reply(body([live, closed]).end());
    const got = await events(client(fake));
    expect(got).toEqual([{ type: 'output', seq: 1, stream: 'stdout', chunk: text('a') }, { type: 'closed', seq: 2 }]);
    expect('time' in (got[0] ?? {})).toBe(false);
  });

  it('asks for SSE by default, and reads SSE when a host answers SSE to a binary ask (an older host)', async () => {
    const sse = (): SseBody => new SseBody(frames.output(1, 'a'), frames.closed(2)).end();
    const byDefault = new FakeFetch().reply(sse());
    const older = new FakeFetch().reply(sse());
    expect(await events(client(byDefault, false))).toEqual(await events(client(older, true)));
    expect(byDefault.calls[0]?.headers['accept']).toBe('text/event-stream');
    expect(older.calls[0]?.headers['accept']).toBe(`${MEDIA}, text/event-stream;q=0.5`);
  });

  it('errors with the code of a failed frame, after the events before it', async () => {
    const fake = new FakeFetch().reply(body([logFrame(out(1, 'a')), bytesOf(BINARY_FRAMING.failed('RESUME_FAILED', 'lost — ü'))]));
    const got: HostProcessEvent[] = [];
    const error = await new Promise<unknown>((resolve) => client(fake).events$(ENV, PID).subscribe({ next: (e) => got.push(e), error: resolve }));
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'RESUME_FAILED', message: 'lost — ü' });
    expect(got.map((e) => e.type)).toEqual(['output']);
  });

  it('comes back after a restart frame, resuming after the last seq', async () => {
    const fake = new FakeFetch().reply(body([logFrame(out(1, 'a')), bytesOf(BINARY_FRAMING.comeBack(1))]).end(), body([logFrame(out(2, 'b')), logFrame({ type: 'closed', seq: 3, time: 3 })]).end());
    const got = await events(client(fake));
    expect(got.map((e) => ('seq' in e ? e.seq : -1))).toEqual([1, 2, 3]);
    expect(fake.calls.map((c) => c.url.searchParams.get('after'))).toEqual(['0', '1']);
  });

  it('ends the attempt at a corrupt frame, keeps what came before, and resumes by seq', async () => {
    const corrupt = logFrame(out(3, 'c'));
    corrupt[4] = 0xff; // a length of about 4 GiB: past the cap
    const fake = new FakeFetch().reply(body([logFrame(out(1, 'a')), logFrame(out(2, 'b')), corrupt, logFrame(out(4, 'never'))]), body([logFrame(out(3, 'c')), logFrame({ type: 'closed', seq: 4, time: 4 })]).end());
    const got = await events(client(fake));
    expect(got.map((e) => ('seq' in e ? e.seq : -1))).toEqual([1, 2, 3, 4]);
    expect(fake.calls.map((c) => c.url.searchParams.get('after'))).toEqual(['0', '2']);
  });

  it('drops a frame cut short by the end of the body, whole, and resumes after the last whole one', async () => {
    const whole = logFrame(out(2, 'bbbb'));
    const fake = new FakeFetch().reply(body([logFrame(out(1, 'a')), whole.subarray(0, whole.byteLength - 2)]).fail(), body([whole, logFrame({ type: 'closed', seq: 3, time: 3 })]).end());
    const got = await events(client(fake));
    expect(got).toEqual([out(1, 'a'), out(2, 'bbbb'), { type: 'closed', seq: 3, time: 3 }].map((e) => ({ ...e })));
    expect(fake.calls.map((c) => c.url.searchParams.get('after'))).toEqual(['0', '1']);
  });

  it('errors DECODE_FAILED on a binary answer a client that asked for SSE gets', async () => {
    const fake = new FakeFetch().reply(body([logFrame(out(1, 'a'))]).end());
    await expect(events(client(fake, false))).rejects.toMatchObject({ code: 'DECODE_FAILED', message: expect.stringContaining('binary stream that was not asked for') });
    expect(fake.calls).toHaveLength(1);
  });
});
