import { getEventListeners } from 'node:events';
import { VirtualTimeScheduler } from 'rxjs';
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

  it("rejects the waiting tasks of a lane whose signal aborts, and never runs them; a task that is not abortable still runs", async () => {
    const queue = new FairQueue(1);
    const started: string[] = [];
    const first = gate(started, 'first');
    const controller = new AbortController();
    const lane = queue.lane(controller.signal);
    const running = lane.run(first.task);
    const waiting = [lane.run(gate(started, 'aborted-1').task), lane.run(gate(started, 'aborted-2').task)];
    const closing = gate(started, 'close');
    const close = lane.run(closing.task, { abortable: false });
    controller.abort(new Error('client went away'));
    await Promise.all(waiting.map((w) => expect(w).rejects.toThrow('client went away')));
    first.finish();
    await running;
    await settle();
    closing.finish();
    await close;
    expect({ started, waiting: queue.waiting }).toEqual({ started: ['first', 'close'], waiting: 0 });
    await expect(lane.run(() => Promise.resolve('late'))).rejects.toThrow('client went away');
  });

  it("holds one abort listener on a lane's signal however many tasks wait, and none once they ran (no MaxListenersExceededWarning)", async () => {
    const queue = new FairQueue(1);
    const controller = new AbortController();
    const lane = queue.lane(controller.signal);
    const started: string[] = [];
    const gates = Array.from({ length: 50 }, (_, i) => gate(started, `t${i}`));
    const results = gates.map((g) => lane.run(g.task));
    await settle();
    expect({ listeners: getEventListeners(controller.signal, 'abort').length, lane: lane.listeners, waiting: queue.waiting }).toEqual({ listeners: 1, lane: 1, waiting: 49 });
    for (const g of gates) {
      g.finish();
      await settle();
    }
    await Promise.all(results);
    expect({ listeners: getEventListeners(controller.signal, 'abort').length, lane: lane.listeners }).toEqual({ listeners: 0, lane: 0 });
  });

  it("drops a waiting task whose own signal aborts (and only it), and removes that signal's listener", async () => {
    const queue = new FairQueue(1);
    const started: string[] = [];
    const first = gate(started, 'first');
    const lane = queue.lane();
    const running = lane.run(first.task);
    const own = new AbortController();
    const dropped = lane.run(gate(started, 'dropped').task, { signal: own.signal });
    const kept = gate(started, 'kept');
    const keptRun = lane.run(kept.task);
    own.abort(new Error('unsubscribed'));
    await expect(dropped).rejects.toThrow('unsubscribed');
    expect(getEventListeners(own.signal, 'abort').length).toBe(0);
    first.finish();
    await running;
    await settle();
    kept.finish();
    await keptRun;
    expect(started).toEqual(['first', 'kept']);
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
  /** What a take settled with, read synchronously after the virtual clock moved. */
  const track = (taken: Promise<() => void>): { outcome: () => unknown; release: () => void } => {
    let outcome: unknown = 'waiting';
    let release: () => void = () => undefined;
    taken.then(
      (give) => {
        release = give;
        outcome = 'granted';
      },
      (error: unknown) => (outcome = error instanceof ApiProblem ? { status: error.status, code: error.code, headers: error.headers } : error),
    );
    return { outcome: () => outcome, release: () => release() };
  };

  it('lets a request past the cap wait its turn, first come first served, and refuses it 503 FILE_BUSY with Retry-After after waitMs (virtual time)', async () => {
    const scheduler = new VirtualTimeScheduler();
    const cap = new HandleCap(2, scheduler, 10_000);
    const a = await cap.take('env');
    await cap.take('env');
    const second = track(cap.take('env'));
    const third = track(cap.take('env'));
    await settle();
    expect({ held: cap.held, queued: cap.queued, second: second.outcome(), third: third.outcome() }).toEqual({ held: 2, queued: 2, second: 'waiting', third: 'waiting' });
    a();
    a(); // idempotent: one handle back, to the first that waits
    await settle();
    expect({ held: cap.held, queued: cap.queued, second: second.outcome(), third: third.outcome() }).toEqual({ held: 2, queued: 1, second: 'granted', third: 'waiting' });
    scheduler.flush();
    await settle();
    expect({ held: cap.held, queued: cap.queued, third: third.outcome() }).toEqual({
      held: 2,
      queued: 0,
      third: { status: 503, code: 'FILE_BUSY', headers: { 'retry-after': '2' } },
    });
    second.release();
    expect(cap.held).toBe(1);
  });

  it('drops a waiting request whose client went away, holding nothing', async () => {
    const cap = new HandleCap(1, new VirtualTimeScheduler(), 10_000);
    const held = await cap.take('env');
    const controller = new AbortController();
    const waiting = cap.take('env', controller.signal);
    controller.abort(new Error('client went away'));
    await expect(waiting).rejects.toThrow('client went away');
    held();
    expect({ held: cap.held, queued: cap.queued }).toEqual({ held: 0, queued: 0 });
  });
});
