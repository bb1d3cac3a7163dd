import { EventHistory } from '../../src/exec/event-history';
import { HistoryBudget } from '../../src/exec/history-budget';
import type { ProcessEvent, TruncatedEvent } from '../../src/exec/process-event';
import { closed, output } from './event-builders';

const replay = (history: EventHistory): ProcessEvent[] => {
  const seen: ProcessEvent[] = [];
  history.events$.subscribe((event) => seen.push(event));
  return seen;
};

const truncated = (nextSeq: number, droppedEvents: number, droppedBytes: number): TruncatedEvent => ({
  type: 'truncated',
  nextSeq,
  droppedEvents,
  droppedBytes,
});

describe('HistoryBudget', () => {
  it('evicts from the histories of ended processes first', () => {
    const budget = new HistoryBudget(6);
    const ended = new EventHistory({}, budget);
    const running = new EventHistory({}, budget);
    ended.append(output(1, 'aaa'));
    ended.append(closed(2));
    running.append(output(1, 'bb'));
    running.append(output(2, 'bb'));
    expect(budget.totalBytes).toBe(4);
    expect(replay(ended)).toEqual([truncated(2, 1, 3), closed(2)]);
    expect(replay(running)).toEqual([output(1, 'bb'), output(2, 'bb')]);
  });

  it('then evicts the globally oldest events of running processes', () => {
    const budget = new HistoryBudget(6);
    const c = new EventHistory({}, budget);
    const d = new EventHistory({}, budget);
    c.append(output(1, 'c1'));
    d.append(output(1, 'd1'));
    c.append(output(2, 'c2'));
    d.append(output(2, 'd2'));
    expect(replay(c)).toEqual([truncated(2, 1, 2), output(2, 'c2')]);
    c.append(output(3, 'c3'));
    expect(replay(d)).toEqual([truncated(2, 1, 2), output(2, 'd2')]);
    expect(replay(c)).toEqual([truncated(2, 1, 2), output(2, 'c2'), output(3, 'c3')]);
    expect(budget.totalBytes).toBe(6);
  });

  it('empties an ended history completely before touching a running one', () => {
    const budget = new HistoryBudget(6);
    const ended = new EventHistory({}, budget);
    const running = new EventHistory({}, budget);
    ended.append(output(1, 'aaa'));
    ended.append(closed(2));
    running.append(output(1, 'bb'));
    running.append(output(2, 'bb'));
    running.append(output(3, 'bbb'));
    expect({ ended: ended.retainedEvents, endedReplay: replay(ended) }).toEqual({
      ended: 0,
      endedReplay: [truncated(3, 2, 3)],
    });
    expect(replay(running)).toEqual([truncated(2, 1, 2), output(2, 'bb'), output(3, 'bbb')]);
    expect(budget.totalBytes).toBe(5);
  });

  it('counts each history once, and forgets a released one', () => {
    const budget = new HistoryBudget(100);
    const a = new EventHistory({}, budget);
    const b = new EventHistory({}, budget);
    a.append(output(1, 'aaaa'));
    b.append(output(1, 'bb'));
    expect({ members: budget.memberCount, bytes: budget.totalBytes }).toEqual({ members: 2, bytes: 6 });
    a.release();
    a.release();
    expect({ members: budget.memberCount, bytes: budget.totalBytes }).toEqual({ members: 1, bytes: 2 });
  });

  it('does not keep ended histories once they are released: its list of them stays bounded', () => {
    const budget = new HistoryBudget(1_000_000);
    const kept: EventHistory[] = [];
    for (let i = 0; i < 10_000; i += 1) {
      const history = new EventHistory({}, budget);
      history.append(output(1, 'x'));
      history.append(closed(2));
      if (i % 100 === 0) kept.push(history);
      else history.release();
    }
    expect({ members: budget.memberCount, bytes: budget.totalBytes }).toEqual({ members: 100, bytes: 100 });
    expect(budget.endedEntries).toBeLessThanOrEqual(2 * 100 + 64);
    // The kept ones are still evicted first, oldest ended first, when the budget is exceeded.
    const big = new EventHistory({}, budget);
    big.append(output(1, 'y'.repeat(999_950)));
    expect(kept.map((history) => history.retainedBytes).filter((bytes) => bytes === 0)).toHaveLength(50);
    expect(kept[49]?.retainedBytes).toBe(0);
    expect(kept[50]?.retainedBytes).toBe(1);
  });

  it('keeps its bookkeeping proportional to what is retained (stale entries are compacted)', () => {
    const budget = new HistoryBudget(1_000_000);
    const history = new EventHistory({ maxEvents: 4 }, budget);
    for (let seq = 1; seq <= 10_000; seq += 1) history.append(output(seq, 'x'));
    expect({ retained: history.retainedEvents, bytes: budget.totalBytes }).toEqual({ retained: 4, bytes: 4 });
    expect(budget.trackedEntries).toBeLessThanOrEqual(2 * 4 + 64 + 1);
  });

  it('also honours each history own bounds', () => {
    const budget = new HistoryBudget(1_000);
    const history = new EventHistory({ maxBytes: 3 }, budget);
    history.append(output(1, 'aa'));
    history.append(output(2, 'bb'));
    expect({ retained: history.retainedBytes, total: budget.totalBytes }).toEqual({ retained: 2, total: 2 });
  });
});
