import { FairQueue, HandleCap } from '../../../../src/host/api/files/fair-queue';
import { ApiProblem } from '../../../../src/host/api/problem';

/** A task the spec finishes by hand, recording when it started. */
function gate(started: string[], name: string): { task: () => Promise<string>; finish: () => void } {
  let finish: () => void = () => undefined;
  const done = new Promise<string>((resolve) => (finish = () => resolve(name)));
  return { task: () => (started.push(name), done), finish: () => finish() };
}

/** Lets settled promises run their callbacks. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
};

describe('FairQueue', () => {
  it('runs at most limit tasks at once', async () => {
    const queue = new FairQueue(2);
    const started: string[] = [];
    const gates = ['a', 'b', 'c'].map((name) => gate(started, name));
    const lane = queue.lane();
    const results = gates.map((g) => lane.run(g.task));
    await settle();
    expect({ started, running: queue.running, waiting: queue.waiting }).toEqual({ started: ['a', 'b'], running: 2, waiting: 1 });
    gates[0]?.finish();
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    gates[1]?.finish();
    gates[2]?.finish();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c']);
    expect({ running: queue.running, waiting: queue.waiting }).toEqual({ running: 0, waiting: 0 });
  });

  it('serves the waiting lanes round-robin: a listing behind a download waits for one of its reads, not all', async () => {
    const queue = new FairQueue(1);
    const started: string[] = [];
    const download = queue.lane();
    const listing = queue.lane();
    const reads = ['r1', 'r2', 'r3', 'r4'].map((name) => gate(started, name));
    const stats = ['s1', 's2'].map((name) => gate(started, name));
    const all = [...reads.map((g) => download.run(g.task)), ...stats.map((g) => listing.run(g.task))];
    for (let i = 0; i < 6; i += 1) {
      await settle();
      const last = started[started.length - 1];
      [...reads, ...stats].find((_, index) => ['r1', 'r2', 'r3', 'r4', 's1', 's2'][index] === last)?.finish();
    }
    await Promise.all(all);
    expect(started).toEqual(['r1', 'r2', 's1', 'r3', 's2', 'r4']);
  });

  it('rejects a waiting task whose signal aborts, and never runs it', async () => {
    const queue = new FairQueue(1);
    const started: string[] = [];
    const first = gate(started, 'first');
    const lane = queue.lane();
    const running = lane.run(first.task);
    const controller = new AbortController();
    const waiting = lane.run(gate(started, 'aborted').task, controller.signal);
    controller.abort(new Error('client went away'));
    await expect(waiting).rejects.toThrow('client went away');
    first.finish();
    await running;
    await settle();
    expect({ started, waiting: queue.waiting }).toEqual({ started: ['first'], waiting: 0 });
  });

  it('frees the slot of a task that throws or rejects', async () => {
    const queue = new FairQueue(1);
    const lane = queue.lane();
    await expect(lane.run(() => Promise.reject(new Error('no')))).rejects.toThrow('no');
    await expect(lane.run(() => { throw new Error('sync'); })).rejects.toThrow('sync');
    expect(await lane.run(() => Promise.resolve(7))).toBe(7);
    expect(queue.running).toBe(0);
  });

  it('refuses a limit that is not a whole number >= 1', () => {
    expect(() => new FairQueue(0)).toThrow(RangeError);
    expect(() => new FairQueue(1.5)).toThrow(RangeError);
  });
});

describe('HandleCap', () => {
  it('refuses past the cap with 503 FILE_BUSY and Retry-After, and gives a handle back once', () => {
    const cap = new HandleCap(2);
    const a = cap.take('env');
    cap.take('env');
    let refused: unknown;
    try {
      cap.take('env');
    } catch (error: unknown) {
      refused = error;
    }
    expect(refused instanceof ApiProblem ? { status: refused.status, code: refused.code, headers: refused.headers } : refused).toEqual({
      status: 503,
      code: 'FILE_BUSY',
      headers: { 'retry-after': '2' },
    });
    a();
    a();
    expect(cap.held).toBe(1);
    cap.take('env');
    expect(cap.held).toBe(2);
  });
});
