/**
 * The binary stream's decoder fed what a network and a broken peer can give it, from a seeded generator
 * (the same cases on every run): frames the host's encoder made, cut at every kind of boundary, cut
 * short, and with bytes flipped. It never crashes: it yields the frames that were sent, in order, up to
 * where the bytes stop being frames, and there throws EventFrameError (nothing else); through the client,
 * a corrupt frame is a clean resume by seq.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { HostClient } from '../../src/client';
import type { BinaryFrame } from '../../src/client/binary-reader';
import { BinaryFrameDecoder, EventFrameError } from '../../src/client/binary-reader';
import { BINARY_FRAMING } from '../../src/host/api/binary-frames';
import type { LogEvent } from '../../src/store/log-events';
import { truncatedRange } from '../../src/store/log-events';
import { bytesOf } from './binary-bytes';
import { mulberry32 as random } from '../faults/fault-kit';
import { FakeFetch, SseBody } from './fake-fetch';

const STREAMS = ['stdout', 'stderr', 'pty'] as const;

/** `count` random events, seqs from 1 (a truncated marker jumps them), ending with `closed`. */
function randomEvents(next: () => number, count: number): LogEvent[] {
  const events: LogEvent[] = [];
  let seq = 1 + Math.floor(next() * 2 ** 40);
  for (let i = 0; i < count; i += 1) {
    const roll = next();
    if (roll < 0.1) {
      const to = seq + Math.floor(next() * 5);
      events.push(truncatedRange('quota', seq, to, Math.floor(next() * 1000)));
      seq = to + 1;
      continue;
    }
    const chunk = new Uint8Array(Math.floor(next() * (next() < 0.1 ? 9000 : 64)));
    const fill = Math.floor(next() * 2 ** 32);
    for (let j = 0; j < chunk.length; j += 1) chunk[j] = (fill >>> (j & 24)) + j;
    events.push({ type: 'output', seq, stream: STREAMS[Math.floor(next() * 3)] ?? 'stdout', chunk, time: Math.floor(next() * 2e12) } as LogEvent);
    seq += 1;
  }
  events.push({ type: 'closed', seq, time: 7 });
  return events;
}

/** The whole stream of `events` (with pings between some), and each frame's own bytes. */
function encode(events: readonly LogEvent[], next: () => number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const event of events) {
    if (next() < 0.1) out.push(bytesOf(BINARY_FRAMING.ping()));
    out.push(bytesOf(BINARY_FRAMING.logEvent(event, false)));
  }
  return out;
}

/** A comparable form of a frame. */
function key(frame: BinaryFrame): string {
  switch (frame.kind) {
    case 'output':
      return `o:${frame.output.seq}:${frame.output.stream}:${frame.output.time}:${Buffer.from(frame.output.chunk).toString('hex')}`;
    case 'event':
      return `e:${frame.message.event}:${frame.message.data}`;
    case 'ping':
      return 'p';
    case 'notice':
      return `n:${frame.text}`;
  }
}

/** Feeds `bytes` in random pieces; returns the frames and the error (if one was thrown). */
function decodeAll(bytes: Uint8Array, next: () => number): { readonly frames: string[]; readonly error: unknown; readonly pending: number } {
  const decoder = new BinaryFrameDecoder();
  const frames: string[] = [];
  try {
    for (let at = 0; at < bytes.byteLength; ) {
      const piece = 1 + Math.floor(next() * (next() < 0.5 ? 16 : 20_000));
      decoder.push(bytes.subarray(at, at + piece));
      at += piece;
      for (let f = decoder.next(); f !== undefined; f = decoder.next()) frames.push(key(f));
    }
  } catch (error: unknown) {
    return { frames, error, pending: decoder.pending };
  }
  return { frames, error: undefined, pending: decoder.pending };
}

/** The frames each whole frame's bytes decode to alone. */
const keysOf = (frameBytes: readonly Uint8Array[]): string[] => frameBytes.map((f) => decodeAll(f, () => 0.99).frames[0] ?? '?');

describe('binary stream decoder, fuzzed (seeded)', () => {
  it('decodes every stream cut into random pieces exactly (200 streams)', () => {
    const next = random(1);
    for (let run = 0; run < 200; run += 1) {
      const frameBytes = encode(randomEvents(next, 1 + Math.floor(next() * 40)), next);
      const got = decodeAll(Buffer.concat(frameBytes), next);
      expect({ run, error: got.error, pending: got.pending, same: got.frames.join('|') === keysOf(frameBytes).join('|') }).toEqual({ run, error: undefined, pending: 0, same: true });
    }
  });

  it('gives the whole frames before a cut and keeps the cut one pending, never throwing (300 cuts)', () => {
    const next = random(2);
    for (let run = 0; run < 300; run += 1) {
      const frameBytes = encode(randomEvents(next, 1 + Math.floor(next() * 20)), next);
      const all = Buffer.concat(frameBytes);
      const cut = Math.floor(next() * all.byteLength);
      const got = decodeAll(all.subarray(0, cut), next);
      let whole = 0;
      for (let bytes = 0; whole < frameBytes.length && bytes + (frameBytes[whole]?.byteLength ?? 0) <= cut; whole += 1) bytes += frameBytes[whole]?.byteLength ?? 0;
      expect({ run, error: got.error, frames: got.frames }).toEqual({ run, error: undefined, frames: keysOf(frameBytes.slice(0, whole)) });
    }
  });

  it('with flipped bytes, yields the frames before the damage unchanged and throws only EventFrameError (400 streams)', () => {
    const next = random(3);
    let thrown = 0;
    for (let run = 0; run < 400; run += 1) {
      const frameBytes = encode(randomEvents(next, 1 + Math.floor(next() * 10)), next);
      const all = Buffer.concat(frameBytes);
      const at = Math.floor(next() * all.byteLength);
      all[at] = (all[at] ?? 0) ^ (1 + Math.floor(next() * 255));
      let before = 0;
      for (let bytes = 0; before < frameBytes.length && bytes + (frameBytes[before]?.byteLength ?? 0) <= at; before += 1) bytes += frameBytes[before]?.byteLength ?? 0;
      const got = decodeAll(all, next);
      if (got.error !== undefined) {
        thrown += 1;
        expect(got.error).toBeInstanceOf(EventFrameError);
      }
      expect(got.frames.slice(0, before)).toEqual(keysOf(frameBytes.slice(0, before)));
    }
    // Header damage is caught: a good share of the runs must have thrown.
    expect(thrown).toBeGreaterThan(20);
  });

  it('refuses each kind of bad header with EventFrameError naming it', () => {
    const good = bytesOf(BINARY_FRAMING.logEvent({ type: 'output', seq: 5, stream: 'stdout', chunk: new Uint8Array([1, 2]), time: 9 } as LogEvent, false));
    const bad = (patch: (b: Uint8Array) => void): string => {
      const b = new Uint8Array(good);
      patch(b);
      const decoder = new BinaryFrameDecoder();
      decoder.push(b);
      try {
        decoder.next();
        return 'none';
      } catch (error: unknown) {
        return error instanceof EventFrameError ? error.message : `other: ${String(error)}`;
      }
    };
    expect(bad((b) => (b[0] = 9))).toContain('unknown frame kind 9');
    expect(bad((b) => (b[2] = 1))).toContain('reserved header bytes');
    expect(bad((b) => (b[1] = 2))).toContain('flags 2');
    expect(bad((b) => (b[4] = 0x7f))).toContain('past the 1048576-byte cap');
    expect(bad((b) => (b[8] = 0xff))).toContain('past 2^53');
    expect(bad((b) => b.set([0, 0, 0, 4], 4))).toContain('no room for its seq');
    expect(bad(() => undefined)).toBe('none');
  });

  it('through the client, a stream damaged at random resumes by seq and delivers every event once (40 streams)', async () => {
    const next = random(4);
    for (let run = 0; run < 40; run += 1) {
      const events = randomEvents(next, 2 + Math.floor(next() * 20));
      const frameBytes = encode(events, next);
      const damaged = Buffer.concat(frameBytes);
      const at = Math.floor(next() * damaged.byteLength);
      // A header byte of some frame: kind 0 is no kind.
      let start = 0;
      for (let i = 0; start + (frameBytes[i]?.byteLength ?? 0) <= at && i < frameBytes.length - 1; i += 1) start += frameBytes[i]?.byteLength ?? 0;
      damaged[start] = 0;
      // The retry is answered by a clean stream from the seq asked for.
      const fake = new FakeFetch().reply(new SseBody().binary().pushBytes(damaged), (call) => {
        const after = Number(call.url.searchParams.get('after'));
        const rest = events.filter((e) => e.type === 'truncated' ? e.nextSeq - 1 > after : e.type === 'failed' || e.seq > after);
        return new SseBody().binary().pushBytes(Buffer.concat(rest.map((e) => bytesOf(BINARY_FRAMING.logEvent(e, false))))).end();
      });
      const client = new HostClient({ url: 'http://h.test', token: 'unit-spec-token-0123456789', fetch: fake.fetch, retry: { initialDelayMs: 1, maxDelayMs: 2 }, binaryEvents: true });
      const first = events[0];
      const afterSeq = (first?.type === 'truncated' ? first.fromSeq : first?.type === 'failed' ? 1 : (first?.seq ?? 1)) - 1;
      const got = await lastValueFrom(client.events$('e', 'p', { afterSeq }).pipe(toArray()));
      const seqs = got.map((e) => (e.type === 'truncated' ? `t${e.nextSeq}` : `${e.seq}`));
      const want = events.map((e) => (e.type === 'truncated' ? `t${e.nextSeq}` : e.type === 'failed' ? 'f' : `${e.seq}`));
      expect({ run, seqs }).toEqual({ run, seqs: want });
    }
  });
});
