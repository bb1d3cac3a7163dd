/**
 * `pipeEvents` pulls the next event at once while less than OUTPUT_MARK_BYTES wait in our stdout and
 * stderr, whatever `write()` answered; once more wait in one of them it pulls no event (each pull of the
 * source counted) until that stream's `drain`, and every byte arrives once and in order; a broken pipe
 * while it waits still ends it (brokenPipe, the events cancelled, no listener left on either stream).
 * `writeEvent` says a `truncated` marker's note, with the bytes the host counted.
 */
import { pipeEvents, writeEvent } from '../../src/cli/remote/event-output';
import { OUTPUT_MARK_BYTES } from '../../src/cli/output-mark';
import type { HostProcessEvent } from '../../src/client/host-types';
import { stalledOutput, turns } from './stalled-output';

const output = (seq: number, text: string | Buffer, stream: 'stdout' | 'stderr' = 'stdout'): HostProcessEvent => ({
  type: 'output',
  seq,
  stream,
  chunk: typeof text === 'string' ? new TextEncoder().encode(text) : new Uint8Array(text),
});

/** More than the mark in one chunk: `fill` bytes, then `OUTPUT_MARK_BYTES - fill + 1` of another. */
const pastMark = (): Buffer => Buffer.concat([Buffer.alloc(OUTPUT_MARK_BYTES, 'a'), Buffer.from('b')]);

/** A source that hands out `events` one per pull (high-water mark 0: a pull only while a read waits), counting the pulls. */
function countedSource(events: readonly HostProcessEvent[]): { readonly stream: ReadableStream<HostProcessEvent>; pulls: number; cancelled: boolean } {
  const queue = [...events];
  const source = {
    pulls: 0,
    cancelled: false,
    stream: new ReadableStream<HostProcessEvent>(
      {
        pull: (controller) => {
          source.pulls += 1;
          const next = queue.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(next);
        },
        cancel: () => {
          source.cancelled = true;
        },
      },
      { highWaterMark: 0 },
    ),
  };
  return source;
}

describe('pipeEvents: backpressure from our stdout and stderr, past OUTPUT_MARK_BYTES', () => {
  it('goes on pulling while less than the mark waits, although write() answers false', async () => {
    const source = countedSource([output(1, 'first chunk'), output(2, 'second'), output(3, 'error line', 'stderr'), output(4, 'third'), { type: 'closed', seq: 5 }]);
    const stdout = stalledOutput();
    const stderr = stalledOutput();
    // Nothing is released: every write stays waiting in the stream, and each answered false.
    expect(await pipeEvents(source.stream, { stdout: stdout.stream, stderr: stderr.stream }, () => undefined)).toEqual({ kind: 'complete' });
    expect({ out: stdout.handed().toString(), err: stderr.handed().toString(), refused: stdout.refused() + stderr.refused() }).toEqual({ out: 'first chunksecondthird', err: 'error line', refused: 4 });
    expect(stdout.stream.writableLength).toBe('first chunksecondthird'.length);
    expect(source.pulls).toBe(6);
  });

  it('pulls no event while more than the mark waits in stdout, and goes on after its drain, every byte once and in order', async () => {
    const big = pastMark();
    const source = countedSource([output(1, 'small'), output(2, big), output(3, 'after'), { type: 'closed', seq: 4 }]);
    const stdout = stalledOutput();
    const stderr = stalledOutput();
    const done = pipeEvents(source.stream, { stdout: stdout.stream, stderr: stderr.stream }, () => undefined);
    await turns();
    // The second event took stdout past the mark: nothing more is pulled however long its reader stalls.
    expect({ pulls: source.pulls, waiting: stdout.stream.writableLength }).toEqual({ pulls: 2, waiting: 'small'.length + big.length });
    await turns();
    expect(source.pulls).toBe(2);
    stdout.release();
    expect(await done).toEqual({ kind: 'complete' });
    expect(stdout.bytes().equals(Buffer.concat([Buffer.from('small'), big, Buffer.from('after')]))).toBe(true);
    expect(source.pulls).toBe(5);
    expect([stdout.stream, stderr.stream].map((s) => s.listenerCount('drain') + s.listenerCount('error'))).toEqual([0, 0]);
  });

  it('pulls no event while more than the mark waits in stderr either', async () => {
    const source = countedSource([output(1, pastMark(), 'stderr'), output(2, 'out')]);
    const stdout = stalledOutput();
    const stderr = stalledOutput();
    const done = pipeEvents(source.stream, { stdout: stdout.stream, stderr: stderr.stream }, () => undefined);
    await turns();
    expect({ pulls: source.pulls, err: stderr.handed().length, out: stdout.handed().toString() }).toEqual({ pulls: 1, err: OUTPUT_MARK_BYTES + 1, out: '' });
    stderr.release();
    expect(await done).toEqual({ kind: 'complete' });
    expect(stdout.bytes().toString()).toBe('out');
  });

  it('a broken pipe while it waits for drain ends it: brokenPipe, the events cancelled, no listener left', async () => {
    const source = countedSource([output(1, pastMark()), output(2, 'never written')]);
    const stdout = stalledOutput();
    const stderr = stalledOutput();
    const done = pipeEvents(source.stream, { stdout: stdout.stream, stderr: stderr.stream }, () => undefined);
    await turns();
    expect(source.pulls).toBe(1);
    stdout.stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(await done).toEqual({ kind: 'brokenPipe' });
    expect({ cancelled: source.cancelled, pulls: source.pulls, written: stdout.handed().length }).toEqual({ cancelled: true, pulls: 1, written: OUTPUT_MARK_BYTES + 1 });
    expect([stdout.stream, stderr.stream].map((s) => s.listenerCount('drain') + s.listenerCount('error'))).toEqual([0, 0]);
  });

  it('a broken pipe while it waits for the next event ends it the same way', async () => {
    let cancelled = false;
    const waiting = new ReadableStream<HostProcessEvent>({ pull: () => new Promise<void>(() => undefined), cancel: () => void (cancelled = true) }, { highWaterMark: 0 });
    const stdout = stalledOutput();
    const stderr = stalledOutput();
    const done = pipeEvents(waiting, { stdout: stdout.stream, stderr: stderr.stream }, () => undefined);
    await turns();
    stderr.stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(await done).toEqual({ kind: 'brokenPipe' });
    expect(cancelled).toBe(true);
    expect([stdout.stream, stderr.stream].map((s) => s.listenerCount('drain') + s.listenerCount('error'))).toEqual([0, 0]);
  });
});

describe('writeEvent: a truncated marker from the host', () => {
  it('says the note, naming the bytes the host counted, and writes nothing to stdout or stderr', () => {
    const [stdout, stderr] = [stalledOutput(), stalledOutput()];
    const io = { stdout: stdout.stream, stderr: stderr.stream };
    const said: string[] = [];
    const say = (line: string): void => void said.push(line);
    expect(writeEvent({ type: 'truncated', nextSeq: 5, droppedEvents: 4, droppedBytes: 1_048_576, reason: 'quota' }, io, say)).toBeUndefined();
    expect(writeEvent({ type: 'truncated', nextSeq: 9, droppedEvents: 3 }, io, say)).toBeUndefined();
    expect(said).toEqual(['output before seq 5 is no longer held (4 events, 1048576 bytes)', 'output before seq 9 is no longer held (3 events)']);
    expect([stdout.handed().byteLength, stderr.handed().byteLength]).toEqual([0, 0]);
  });
});
