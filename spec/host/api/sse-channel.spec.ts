/**
 * `SseChannel`, one part of an event stream that carries more (the multiplexed overview): ending it ends
 * that part only; what is the connection's failure (a write past the bound, a stall) ends the stream; the
 * stream's end ends it. On a PassThrough as the response (write, end, writableLength, close and drain).
 */
import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { StreamEndReason } from '../../../src/host/metrics/host-metrics';
import { SseChannel } from '../../../src/host/api/sse-channel';
import { SseStream } from '../../../src/host/api/sse-stream';

const BOUND = 1024;

function opened(): { readonly stream: SseStream; readonly channel: SseChannel; readonly res: PassThrough; readonly reasons: StreamEndReason[]; readonly channelEnds: () => number } {
  const res = new PassThrough({ highWaterMark: 16 });
  const reasons: StreamEndReason[] = [];
  const stream = new SseStream(res as unknown as ServerResponse, 'token', BOUND, { opened: () => undefined, sent: () => undefined, ended: (reason) => void reasons.push(reason) });
  const channel = new SseChannel(stream);
  let ends = 0;
  channel.onEnd(() => (ends += 1));
  return { stream, channel, res, reasons, channelEnds: () => ends };
}

const frame = (bytes: number): Buffer => Buffer.alloc(bytes, 0x61);

describe('SseChannel', () => {
  it('ends only its part: the stream stays open and takes frames', () => {
    const { stream, channel, reasons, channelEnds } = opened();
    expect(channel.write(frame(10))).toBe(true);
    channel.end();
    channel.end();
    expect({ channel: channel.isEnded, stream: stream.isEnded, ends: channelEnds(), reasons }).toEqual({ channel: true, stream: false, ends: 1, reasons: [] });
    expect(channel.write(frame(10))).toBe(false);
    expect(stream.write(frame(10))).toBe(true);
    let late = false;
    channel.onEnd(() => (late = true));
    expect(late).toBe(true);
  });

  it('shares the stream buffer and bound: a write past it ends the stream (overflow) and the channel', () => {
    const { stream, channel, reasons, channelEnds } = opened();
    expect(channel.highWater).toBe(BOUND / 2);
    expect(stream.write(frame(600))).toBe(true);
    expect(channel.buffered).toBe(stream.buffered);
    expect(channel.write(frame(600))).toBe(false);
    expect({ channel: channel.isEnded, stream: stream.isEnded, ends: channelEnds(), reasons }).toEqual({ channel: true, stream: true, ends: 1, reasons: ['overflow'] });
  });

  it('ends the stream for a stall, and ends with the stream', () => {
    const stalled = opened();
    stalled.channel.end('stalled');
    expect({ stream: stalled.stream.isEnded, reasons: stalled.reasons, ends: stalled.channelEnds() }).toEqual({ stream: true, reasons: ['stalled'], ends: 1 });
    const closed = opened();
    closed.stream.end('closed');
    expect({ channel: closed.channel.isEnded, ends: closed.channelEnds() }).toEqual({ channel: true, ends: 1 });
  });

  it('hears the connection drain, and can stop listening', async () => {
    const { channel, res } = opened();
    channel.write(frame(100));
    let cancelledHeard = false;
    const cancel = channel.onDrain(() => (cancelledHeard = true));
    cancel();
    const drained = new Promise<void>((resolve) => void channel.onDrain(resolve));
    res.resume();
    await drained;
    expect(cancelledHeard).toBe(false);
  });
});
