/**
 * An SSE stream corks its response until the event loop's check phase or CORK_BYTES: the frames written
 * while the host handles one poll phase's socket reads leave together (a few writev calls on a real
 * socket), in order, and nothing waits longer than that turn. The bound counts corked bytes, and
 * `end()` sends them at once.
 */
import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { CORK_BYTES, SseStream } from '../../../src/host/api/sse';

/** A stream over an in-memory response, and what reached the response's reader. */
function openStream(bufferBytes = 1 << 20): { readonly stream: SseStream; readonly res: PassThrough; readonly received: () => string } {
  const res = new PassThrough();
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  // The stream uses only what a PassThrough has of a response: write, cork, uncork, end, writableLength, close and drain.
  const stream = new SseStream(res as unknown as ServerResponse, 'token', bufferBytes);
  return { stream, res, received: () => Buffer.concat(chunks).toString('utf8') };
}

const checkPhase = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SseStream corking', () => {
  it('holds the frames of one turn until the check phase, then sends them in order', async () => {
    const { stream, res, received } = openStream();
    for (let i = 1; i <= 5; i += 1) expect(stream.write(Buffer.from(`id: ${i}\n\n`))).toBe(true);
    await Promise.resolve();
    expect({ received: received(), corked: res.writableCorked, buffered: stream.buffered }).toEqual({ received: '', corked: 1, buffered: 5 * 7 });
    await checkPhase();
    expect({ received: received(), corked: res.writableCorked }).toEqual({ received: 'id: 1\n\nid: 2\n\nid: 3\n\nid: 4\n\nid: 5\n\n', corked: 0 });
    // The next turn corks again, once.
    stream.write(Buffer.from('id: 6\n\n'));
    expect(res.writableCorked).toBe(1);
    await checkPhase();
    expect(received().endsWith('id: 6\n\n')).toBe(true);
    stream.end();
  });

  it('sends at once once CORK_BYTES are corked, and corks again for the rest of the turn', async () => {
    const { stream, res, received } = openStream(4 * CORK_BYTES);
    const frame = Buffer.alloc(CORK_BYTES / 4, 'x');
    for (let i = 0; i < 3; i += 1) stream.write(frame);
    expect({ received: received().length, corked: res.writableCorked }).toEqual({ received: 0, corked: 1 });
    stream.write(frame); // the fourth reaches CORK_BYTES: all four leave now
    expect({ received: received().length, corked: res.writableCorked }).toEqual({ received: CORK_BYTES, corked: 0 });
    stream.write(frame);
    expect({ received: received().length, corked: res.writableCorked }).toEqual({ received: CORK_BYTES, corked: 1 });
    await checkPhase();
    expect({ received: received().length, corked: res.writableCorked }).toEqual({ received: CORK_BYTES + frame.byteLength, corked: 0 });
    stream.end();
  });

  it('counts corked bytes against the bound: past it the stream ends', () => {
    const { stream } = openStream(16);
    expect(stream.write(Buffer.from('0123456789'))).toBe(true);
    expect(stream.write(Buffer.from('0123456789'))).toBe(false);
    expect(stream.isEnded).toBe(true);
  });

  it('sends what is corked when it ends, without waiting for the check phase', () => {
    const { stream, res, received } = openStream();
    stream.write(Buffer.from('id: 1\n\n'));
    stream.end();
    expect({ received: received(), corked: res.writableCorked, ended: res.writableEnded }).toEqual({ received: 'id: 1\n\n', corked: 0, ended: true });
  });
});
