import { randomBytes } from 'node:crypto';
import { FRAME_CACHE_BYTES, frameOf, logFrameOf } from '../../../src/host/api/event-frames';
import type { ProcessEvent } from '../../../src/exec/process-event';

const output = (seq: number, size: number): ProcessEvent => ({ type: 'output', seq, stream: 'stdout', chunk: new Uint8Array(size) });

describe('SSE frames of process events', () => {
  it('encodes an event once for every subscriber that sends it (the same Buffer)', () => {
    const event = output(7, 16);
    const first = frameOf(event);
    expect(frameOf(event)).toBe(first);
    expect(first.toString()).toBe(`id: 7\nevent: output\ndata: {"seq":7,"stream":"stdout","chunk":"${Buffer.alloc(16).toString('base64')}"}\n\n`);
  });

  it('cuts small frames from shared slabs without overlap: every frame kept stays whole as more are made', () => {
    const made: { readonly chunk: Uint8Array; readonly frame: Buffer }[] = [];
    for (let seq = 1; seq <= 200; seq += 1) {
      const chunk = randomBytes(1 + ((seq * 7919) % 12_000));
      made.push({ chunk, frame: frameOf({ type: 'output', seq, stream: 'stdout', chunk }) });
    }
    const backing = new Set(made.map(({ frame }) => frame.buffer));
    expect(backing.size).toBeLessThan(made.length / 2); // slabs, not a buffer each
    for (const [i, { chunk, frame }] of made.entries()) {
      const data = /data: (.*)\n\n$/s.exec(frame.toString('latin1'))?.[1] ?? '{}';
      expect({ seq: i + 1, chunk: Buffer.from((JSON.parse(data) as { chunk: string }).chunk, 'base64').equals(chunk) }).toEqual({ seq: i + 1, chunk: true });
    }
  });

  it('keeps only recent frames: past the cache bound an old event is encoded again (equal bytes, a new Buffer)', () => {
    const old = output(1, 1024);
    const kept = frameOf(old);
    // Each of these frames is about 8 KB (6000 bytes in base64 plus the frame): enough of them fill the cache.
    const bulk = Math.ceil(FRAME_CACHE_BYTES / 8000) + 16;
    for (let seq = 2; seq < bulk; seq += 1) frameOf(output(seq, 6000));
    const again = frameOf(old);
    expect(again).not.toBe(kept);
    expect(again.equals(kept)).toBe(true);
  });

  it('shares the frame of an event larger than the cache bound while it is the newest, and drops it after', () => {
    const large = output(1, FRAME_CACHE_BYTES);
    const first = frameOf(large);
    expect(first.byteLength).toBeGreaterThan(FRAME_CACHE_BYTES);
    expect(frameOf(large)).toBe(first);
    frameOf(output(2, 16));
    const again = frameOf(large);
    expect(again).not.toBe(first);
    expect(again.equals(first)).toBe(true);
  });

  it('shares a log event\'s frame only when asked (an event from the log\'s memory), and the frame carries its time', () => {
    const event = { type: 'output' as const, seq: 9, stream: 'stdout' as const, chunk: Buffer.from('hi'), time: 1_700_000_000_000 };
    const shared = logFrameOf(event, true);
    expect(logFrameOf(event, true)).toBe(shared);
    const own = logFrameOf(event);
    expect(own).not.toBe(shared);
    expect(own.equals(shared)).toBe(true);
    expect(shared.toString('latin1')).toBe('id: 9\nevent: output\ndata: {"seq":9,"time":1700000000000,"stream":"stdout","chunk":"aGk="}\n\n');
  });

  it('writes an output frame byte for byte as its text: any size, any stream, chunks that are views of a larger buffer', () => {
    for (const [size, stream] of [[0, 'stdout'], [1, 'stderr'], [2, 'pty'], [3, 'stdout'], [5000, 'stderr'], [70_001, 'pty']] as const) {
      const backing = randomBytes(size + 13);
      const chunk = backing.subarray(7, 7 + size);
      const seq = 1000 + size;
      const text = `id: ${seq}\nevent: output\ndata: {"seq":${seq},"stream":"${stream}","chunk":"${chunk.toString('base64')}"}\n\n`;
      expect(frameOf({ type: 'output', seq, stream, chunk }).toString('latin1')).toBe(text);
    }
  });

  it('encodes exited, closed, failed and truncated with their own event types; only sequenced ones carry an id', () => {
    expect(frameOf({ type: 'exited', seq: 3, exitCode: 2, sandboxDenied: false }).toString()).toBe('id: 3\nevent: exited\ndata: {"seq":3,"exitCode":2}\n\n');
    expect(frameOf({ type: 'closed', seq: 4 }).toString()).toBe('id: 4\nevent: closed\ndata: {"seq":4}\n\n');
    expect(frameOf({ type: 'truncated', nextSeq: 9, droppedEvents: 8, droppedBytes: 100 }).toString()).toBe('event: truncated\ndata: {"nextSeq":9,"droppedEvents":8,"droppedBytes":100}\n\n');
  });
});
