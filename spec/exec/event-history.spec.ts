import fc from 'fast-check';
import { take } from 'rxjs';
import { ProcessFailedError } from '../../src/errors';
import { EventHistory } from '../../src/exec/event-history';
import { HistoryBudget } from '../../src/exec/history-budget';
import type { FailedEvent, ProcessEvent, TruncatedEvent } from '../../src/exec/process-event';
import type { SequencedEvent } from '../../src/wire/process-event';
import { testScheduler } from '../support/marbles';
import { closed, exited, output, outputBytes } from './event-builders';

const truncated = (nextSeq: number, droppedEvents: number, droppedBytes: number): TruncatedEvent => ({
  type: 'truncated',
  nextSeq,
  droppedEvents,
  droppedBytes,
});

const failed: FailedEvent = { type: 'failed', error: new ProcessFailedError('p1', 'failed to recover process p1: boom') };

const collect = (history: EventHistory): ProcessEvent[] => {
  const seen: ProcessEvent[] = [];
  history.events$.subscribe((event) => seen.push(event));
  return seen;
};

describe('EventHistory', () => {
  it('gives late subscribers the replay, then live events, with no gap and no duplicate', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      const history = new EventHistory();
      const v = { a: output(1, 'a'), b: output(2, 'b'), c: exited(3, 0), d: closed(4) };
      hot('-a-b-----c-d', v).subscribe((event) => history.append(event));
      expectObservable(history.events$).toBe('-a-b-----c-(d|)', v);
      // a sync group spans as many frames as it has characters: (ab) covers frames 4 to 7
      expectObservable(history.events$, '----^').toBe('----(ab)-c-(d|)', v);
      expectObservable(history.events$, '------------^').toBe('------------(abcd|)', v);
    });
  });

  it('delivers a failure as a value, then completes, live and to late subscribers', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      const history = new EventHistory();
      const v = { a: output(1, 'a'), f: failed };
      hot('-a--f', v).subscribe((event) => history.append(event));
      expectObservable(history.events$).toBe('-a--(f|)', v);
      expectObservable(history.events$, '------^').toBe('------(af|)', v);
    });
  });

  it('is bounded by event count, with one truncation marker before a contiguous run', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      const history = new EventHistory({ maxEvents: 2 });
      const v = { a: output(1, 'a'), b: output(2, 'bb'), c: output(3, 'c'), d: output(4, 'd') };
      hot('-a-b-c-d', v).subscribe((event) => history.append(event));
      expectObservable(history.events$, '--------^').toBe('--------(tcd)', { ...v, t: truncated(3, 2, 3) });
    });
  });

  it('is bounded by bytes (exit and close events weigh nothing)', () => {
    const history = new EventHistory({ maxBytes: 5 });
    for (const event of [output(1, 'aaa'), output(2, 'bbb'), exited(3, 1), output(4, 'cc')]) history.append(event);
    expect(collect(history)).toEqual([truncated(2, 1, 3), output(2, 'bbb'), exited(3, 1), output(4, 'cc')]);
    expect({
      events: history.retainedEvents,
      bytes: history.retainedBytes,
      dropped: history.droppedEvents,
      droppedBytes: history.droppedBytes,
    }).toEqual({ events: 3, bytes: 5, dropped: 1, droppedBytes: 3 });
  });

  it('keeps count of subscribers and drops them when they unsubscribe or the history ends', () => {
    const history = new EventHistory();
    const first = history.events$.subscribe();
    history.events$.subscribe();
    expect(history.subscriberCount).toBe(2);
    first.unsubscribe();
    expect(history.subscriberCount).toBe(1);
    history.append(closed(1));
    expect(history.subscriberCount).toBe(0);
  });

  it('stops replaying to a subscriber that unsubscribes during its replay', () => {
    const history = new EventHistory();
    for (const event of [output(1, 'a'), output(2, 'b'), output(3, 'c')]) history.append(event);
    const seen: ProcessEvent[] = [];
    history.events$.pipe(take(2)).subscribe((event) => seen.push(event));
    expect({ seen, subscribers: history.subscriberCount }).toEqual({ seen: [output(1, 'a'), output(2, 'b')], subscribers: 0 });
  });

  it('delivers an append made from a subscriber callback after the current one, to everyone in order', () => {
    const history = new EventHistory();
    history.events$.subscribe((event) => {
      if (event.type === 'output' && event.seq === 1) history.append(output(2, 'echo'));
    });
    const second = collect(history);
    history.append(output(1, 'a'));
    expect(second).toEqual([output(1, 'a'), output(2, 'echo')]);
    expect(collect(history)).toEqual([output(1, 'a'), output(2, 'echo')]);
  });

  it('ignores appends after the end', () => {
    const history = new EventHistory();
    history.append(closed(1));
    history.append(output(2, 'late'));
    history.append(failed);
    expect({ terminated: history.terminated, replay: collect(history) }).toEqual({ terminated: true, replay: [closed(1)] });
  });

  it('release() drops the retained history; later subscribers get the marker and the end', () => {
    const history = new EventHistory();
    const live = collect(history);
    for (const event of [output(1, 'ab'), exited(2, 0)]) history.append(event);
    history.release();
    history.append(closed(3));
    expect(live).toEqual([output(1, 'ab'), exited(2, 0), closed(3)]);
    expect({ events: history.retainedEvents, bytes: history.retainedBytes }).toEqual({ events: 0, bytes: 0 });
    expect(collect(history)).toEqual([truncated(4, 3, 2)]);
  });

  it('release() of a history at its byte bound drops it at once: no byte ring is made on the way, the counts stay exact', () => {
    const budget = new HistoryBudget(64 * 1024 * 1024);
    const history = new EventHistory({ maxEvents: 4096, maxBytes: 1024 * 1024 }, budget);
    for (let seq = 1; seq <= 200; seq += 1) history.append(outputBytes(seq, Buffer.alloc(16 * 1024, seq)));
    expect({ events: history.retainedEvents, bytes: history.retainedBytes, budget: budget.totalBytes }).toEqual({ events: 64, bytes: 1024 * 1024, budget: 1024 * 1024 });
    const allocations = jest.spyOn(Buffer, 'allocUnsafe');
    try {
      history.release();
      // Evicting one event at a time shrank the ring on the way: 1 MiB, then 256 KiB, 64 KiB ... each a copy.
      expect(allocations).not.toHaveBeenCalled();
    } finally {
      allocations.mockRestore();
    }
    expect({ events: history.retainedEvents, bytes: history.retainedBytes, droppedEvents: history.droppedEvents, droppedBytes: history.droppedBytes, budget: budget.totalBytes, members: budget.memberCount }).toEqual({
      events: 0,
      bytes: 0,
      droppedEvents: 200,
      droppedBytes: 200 * 16 * 1024,
      budget: 0,
      members: 0,
    });
    expect(collect(history)).toEqual([truncated(201, 200, 200 * 16 * 1024)]);
  });

  it('always starts the replay after the marker at its nextSeq and runs contiguously to the end', () => {
    const sizes = fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 80 });
    const bounds = fc.record({ maxEvents: fc.integer({ min: 1, max: 20 }), maxBytes: fc.integer({ min: 1, max: 200 }) });
    fc.assert(
      fc.property(sizes, bounds, (chunkSizes, options) => {
        const history = new EventHistory(options);
        chunkSizes.forEach((size, i) => history.append(outputBytes(i + 1, new Uint8Array(size))));
        const replay = collect(history);
        const sequenced = replay.filter((e): e is SequencedEvent => e.type !== 'truncated' && e.type !== 'failed');
        const first = replay[0];
        const start = first?.type === 'truncated' ? first.nextSeq : 1;
        expect(sequenced.map((e) => e.seq)).toEqual(
          Array.from({ length: chunkSizes.length - start + 1 }, (_, i) => start + i),
        );
        expect(replay.filter((e) => e.type === 'truncated')).toHaveLength(start === 1 ? 0 : 1);
        expect(history.retainedEvents).toBeLessThanOrEqual(options.maxEvents);
        expect(history.retainedBytes).toBeLessThanOrEqual(options.maxBytes);
        expect(history.droppedEvents).toBe(start - 1);
      }),
    );
  });
});

describe('EventHistory.eventsAfter$', () => {
  const seqs = (events: ProcessEvent[]): string[] => events.map((e) => (e.type === 'truncated' ? `truncated@${e.nextSeq}` : e.type === 'failed' ? 'failed' : `${e.seq}`));
  const after = (history: EventHistory, seq: number): ProcessEvent[] => {
    const seen: ProcessEvent[] = [];
    history.eventsAfter$(seq).subscribe((event) => seen.push(event));
    return seen;
  };

  it('replays only what follows seq while history still reaches it, then goes live with no gap', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      const history = new EventHistory();
      const v = { a: output(1, 'a'), b: output(2, 'b'), c: output(3, 'c'), d: closed(4) };
      hot('-a-b-c---d', v).subscribe((event) => history.append(event));
      expectObservable(history.eventsAfter$(2), '------^').toBe('------c--(d|)', v);
      expectObservable(history.eventsAfter$(1), '----^').toBe('----bc---(d|)', v);
    });
  });

  it('starts with one marker naming the first seq that follows when history no longer reaches seq + 1', () => {
    const history = new EventHistory({ maxEvents: 2 });
    for (const event of [output(1, 'a'), output(2, 'bb'), output(3, 'c'), output(4, 'd')]) history.append(event);
    expect(after(history, 1)).toEqual([truncated(3, 2, 3), output(3, 'c'), output(4, 'd')]);
    expect(after(history, 2)).toEqual([output(3, 'c'), output(4, 'd')]);
    expect(after(history, 3)).toEqual([output(4, 'd')]);
  });

  it('skips live events up to a seq beyond the last one, and gives nothing twice', () => {
    const history = new EventHistory();
    history.append(output(1, 'a'));
    const seen = after(history, 3);
    for (const event of [output(2, 'b'), output(3, 'c'), output(4, 'd'), closed(5)]) history.append(event);
    expect(seqs(seen)).toEqual(['4', '5']);
  });

  it('after the end: what is retained after seq, the failure, then completion; nothing for a seq past it', () => {
    const history = new EventHistory();
    for (const event of [output(1, 'a'), output(2, 'b')]) history.append(event);
    history.append(failed);
    expect(seqs(after(history, 1))).toEqual(['2', 'failed']);
    expect(seqs(after(history, 7))).toEqual(['failed']);
    let completed = false;
    history.eventsAfter$(7).subscribe({ complete: () => (completed = true) });
    expect(completed).toBe(true);
  });

  it('after release(): only the marker at the next seq, then live', () => {
    const history = new EventHistory();
    for (const event of [output(1, 'a'), output(2, 'b')]) history.append(event);
    history.release();
    const seen = after(history, 1);
    history.append(output(3, 'c'));
    expect(seen).toEqual([truncated(3, 2, 2), output(3, 'c')]);
  });

  it('is events$ itself for seq 0', () => {
    const history = new EventHistory();
    expect(history.eventsAfter$(0)).toBe(history.events$);
  });

  it('for any bounds, append order and seq: the marker comes first only when needed, and seqs after it are contiguous up to the last', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 25 }), (maxEvents, count, afterSeq) => {
        const history = new EventHistory({ maxEvents });
        for (let seq = 1; seq <= count; seq += 1) history.append(output(seq, 'x'));
        const seen = after(history, afterSeq);
        const firstRetained = Math.max(1, count - maxEvents + 1);
        const needsMarker = afterSeq + 1 < firstRetained;
        const expected = [...(needsMarker ? [`truncated@${firstRetained}`] : [])];
        for (let seq = Math.max(afterSeq + 1, firstRetained); seq <= count; seq += 1) expected.push(String(seq));
        expect(seqs(seen)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
