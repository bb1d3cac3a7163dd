/**
 * `pipeEvents` honours `write()`'s answer: while our stdout (or stderr) is full it pulls no event (each
 * pull of the source counted) until `drain`; a broken pipe while it waits still ends it (brokenPipe, the
 * events cancelled, no listener left on either stream).
 */
import { Writable } from 'node:stream';
import { pipeEvents } from '../../src/cli/remote/event-output';
import type { HostProcessEvent } from '../../src/client/host-types';

const output = (seq: number, text: string, stream: 'stdout' | 'stderr' = 'stdout'): HostProcessEvent => ({ type: 'output', seq, stream, chunk: new TextEncoder().encode(text) });

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

/** A writable whose writes complete only when the spec says (a reader that stalls); full past 4 bytes. */
function stalledOutput(): { readonly stream: Writable; readonly text: () => string; release(): void } {
  const written: string[] = [];
  const held: (() => void)[] = [];
  let releasing = false;
  const stream = new Writable({
    highWaterMark: 4,
    write: (chunk: Buffer, _encoding, callback) => {
      written.push(chunk.toString('utf8'));
      if (releasing) callback();
      else held.push(() => callback());
    },
  });
  return {
    stream,
    text: () => written.join(''),
    release: () => {
      releasing = true;
      for (const done of held.splice(0)) done();
    },
  };
}

/** Lets the streams' callbacks and the promise work run. */
const turns = async (count = 5): Promise<void> => {
  for (let i = 0; i < count; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe('pipeEvents: backpressure from our stdout and stderr', () => {
  it('pulls no event while stdout is full, and goes on after its drain', async () => {
    const source = countedSource([output(1, 'first chunk'), output(2, 'second'), output(3, 'third'), { type: 'closed', seq: 4 }]);
    const stdout = stalledOutput();
    const stderr = stalledOutput();
    const done = pipeEvents(source.stream, { stdout: stdout.stream, stderr: stderr.stream }, () => undefined);
    await turns();
    // The first event filled stdout: nothing more is pulled however long its reader stalls.
    expect({ pulls: source.pulls, text: stdout.text() }).toEqual({ pulls: 1, text: 'first chunk' });
    await turns();
    expect(source.pulls).toBe(1);
    stdout.release();
    expect(await done).toEqual({ kind: 'complete' });
    expect(stdout.text()).toBe('first chunksecondthird');
    expect(source.pulls).toBe(5);
    expect([stdout.stream, stderr.stream].map((s) => s.listenerCount('drain') + s.listenerCount('error'))).toEqual([0, 0]);
  });

  it('pulls no event while stderr is full either', async () => {
    const source = countedSource([output(1, 'an error line', 'stderr'), output(2, 'out')]);
    const stdout = stalledOutput();
    const stderr = stalledOutput();
    const done = pipeEvents(source.stream, { stdout: stdout.stream, stderr: stderr.stream }, () => undefined);
    await turns();
    expect({ pulls: source.pulls, err: stderr.text(), out: stdout.text() }).toEqual({ pulls: 1, err: 'an error line', out: '' });
    stderr.release();
    stdout.release();
    expect(await done).toEqual({ kind: 'complete' });
    expect(stdout.text()).toBe('out');
  });

  it('a broken pipe while it waits for drain ends it: brokenPipe, the events cancelled, no listener left', async () => {
    const source = countedSource([output(1, 'fills stdout'), output(2, 'never written')]);
    const stdout = stalledOutput();
    const stderr = stalledOutput();
    const done = pipeEvents(source.stream, { stdout: stdout.stream, stderr: stderr.stream }, () => undefined);
    await turns();
    expect(source.pulls).toBe(1);
    stdout.stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(await done).toEqual({ kind: 'brokenPipe' });
    expect({ cancelled: source.cancelled, pulls: source.pulls, text: stdout.text() }).toEqual({ cancelled: true, pulls: 1, text: 'fills stdout' });
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
