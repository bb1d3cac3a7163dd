/**
 * planFill: what a subscriber older than the host's history gets from the executor's retained window.
 * Every seq of the gap is an event or counted by exactly one `truncated` marker, and a marker covers only
 * what the window does not have.
 */
import type { FillItem } from '../../../src/host/api/window-fill';
import { planFill } from '../../../src/host/api/window-fill';
import type { ReadResponse } from '../../../src/wire/process';

const chunk = (seq: number): ReadResponse['chunks'][number] => ({ seq, stream: 'stdout', chunk: Buffer.from(`c${seq}`) });

/** A read holding chunks `seqs`; `nextSeq` one past the highest seq the executor assigned. */
function read(seqs: readonly number[], nextSeq: number, exit?: number): ReadResponse {
  return { chunks: seqs.map(chunk), nextSeq, exited: exit !== undefined, exitCode: exit ?? null, closed: false, failure: null, sandboxDenied: false };
}

const show = (items: readonly FillItem[]): string[] =>
  items.map((item) => (item.kind === 'truncated' ? `truncated:${item.nextSeq}:${item.droppedEvents}` : `${item.event.type}:${item.event.seq}`));

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('planFill', () => {
  it('fills the whole gap when the window reaches the cursor', () => {
    expect(show(planFill(read(range(1, 20), 21), { cursor: 4, until: 9 }))).toEqual(['output:5', 'output:6', 'output:7', 'output:8']);
  });

  it('marks only what the window no longer has, then fills from its first chunk', () => {
    // The window starts at 34; the subscriber has 28; the host's history starts at 40.
    expect(show(planFill(read(range(34, 60), 61, 0), { cursor: 28, until: 40 }))).toEqual([
      'truncated:34:5',
      ...range(34, 39).map((seq) => `output:${seq}`),
    ]);
  });

  it('never takes a seq before the window for the exit: it is as unknown as an evicted chunk', () => {
    expect(show(planFill(read(range(34, 60), 62, 0), { cursor: 28, until: 36 }))).toEqual(['truncated:34:5', 'output:34', 'output:35']);
  });

  it('places the exit at the one seq inside the window that no chunk carries', () => {
    const chunks = [...range(10, 14), ...range(16, 18)];
    expect(show(planFill(read(chunks, 20, 3), { cursor: 11, until: 19 }))).toEqual(['output:12', 'output:13', 'output:14', 'exited:15', 'output:16', 'output:17', 'output:18']);
  });

  it('places the exit after the last chunk when it comes before the history', () => {
    expect(show(planFill(read(range(5, 9), 12, 0), { cursor: 6, until: 11 }))).toEqual(['output:7', 'output:8', 'output:9', 'exited:10']);
  });

  it('gives the close of a closed process whose history holds nothing', () => {
    expect(show(planFill(read(range(1, 3), 6, 0), { cursor: 1, until: 6, closeSeq: 5 }))).toEqual(['output:2', 'output:3', 'exited:4', 'closed:5']);
  });

  it('stops at what the executor had assigned when it answered: later seqs are for the next read', () => {
    expect(show(planFill(read(range(1, 10), 11), { cursor: 2, until: 15 }))).toEqual(range(3, 10).map((seq) => `output:${seq}`));
  });

  it('marks the whole gap when the window holds nothing of it (an empty read, say after a failure)', () => {
    expect(show(planFill(read([], 30), { cursor: 3, until: 20 }))).toEqual(['truncated:20:16']);
  });

  it('marks a hole inside the window it cannot explain, and goes on after it', () => {
    expect(show(planFill(read([4, 5, 8, 9], 10), { cursor: 3, until: 10 }))).toEqual(['output:4', 'output:5', 'truncated:8:2', 'output:8', 'output:9']);
  });
});
