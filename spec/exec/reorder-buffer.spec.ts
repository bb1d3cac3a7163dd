import fc from 'fast-check';
import { ReorderOverflowError } from '../../src/errors';
import type { SequencedEvent } from '../../src/wire/process-event';
import { DEFAULT_REORDER_LIMITS, ReorderBuffer } from '../../src/exec/reorder-buffer';
import { closed, exited, output, outputBytes, plain, thrown } from './event-builders';

const pushAll = (buffer: ReorderBuffer, events: readonly SequencedEvent[]): SequencedEvent[] =>
  events.flatMap((event) => [...buffer.push(event)]);

const seqs = (events: readonly SequencedEvent[]): number[] => events.map((e) => e.seq);

describe('ReorderBuffer', () => {
  it('publishes in-order events one by one, each as soon as it arrives', () => {
    const buffer = new ReorderBuffer('p1');
    expect(buffer.push(output(1, 'a'))).toEqual([output(1, 'a')]);
    expect(buffer.push(output(2, 'b', 'stderr'))).toEqual([output(2, 'b', 'stderr')]);
    expect(buffer.lastPublishedSeq).toBe(2);
    expect({ count: buffer.pendingCount, bytes: buffer.pendingBytes }).toEqual({ count: 0, bytes: 0 });
  });

  it('accepts an exit that precedes the output, and only closed ends the run', () => {
    const buffer = new ReorderBuffer('p1');
    const events = [exited(1, 0), output(2, 'a\n'), output(3, 'b\n', 'stderr'), closed(4)];
    expect(pushAll(buffer, events)).toEqual(events);
    expect({ exitSeen: buffer.exitSeen, closed: buffer.closedPublished }).toEqual({ exitSeen: true, closed: true });
  });

  it('drops duplicates: already published seqs and seqs already pending', () => {
    const buffer = new ReorderBuffer('p1');
    pushAll(buffer, [output(1, 'a'), output(2, 'b')]);
    expect(buffer.push(output(1, 'a'))).toEqual([]);
    expect(buffer.push(output(4, 'd'))).toEqual([]);
    expect(buffer.push(output(4, 'd'))).toEqual([]);
    expect({ count: buffer.pendingCount, bytes: buffer.pendingBytes }).toEqual({ count: 1, bytes: 1 });
    expect(buffer.push(output(3, 'c'))).toEqual([output(3, 'c'), output(4, 'd')]);
    expect(buffer.push(output(2, 'b'))).toEqual([]);
  });

  it('releases an out-of-order burst as one contiguous run when the gap fills', () => {
    const buffer = new ReorderBuffer('p1');
    expect(pushAll(buffer, [output(3, 'c'), output(2, 'b'), output(5, 'e'), exited(4, 1)])).toEqual([]);
    expect(buffer.missingRange()).toEqual({ from: 1, to: 1 });
    expect(buffer.push(output(1, 'a'))).toEqual([output(1, 'a'), output(2, 'b'), output(3, 'c'), exited(4, 1), output(5, 'e')]);
    expect(buffer.missingRange()).toBeUndefined();
  });

  it('holds an early closed until the tail output arrives, then ignores everything', () => {
    const buffer = new ReorderBuffer('p1');
    pushAll(buffer, [output(1, 'a'), exited(2, 0)]);
    expect(buffer.push(closed(4))).toEqual([]);
    expect(buffer.closedPublished).toBe(false);
    expect(buffer.push(output(3, 'tail'))).toEqual([output(3, 'tail'), closed(4)]);
    expect(buffer.closedPublished).toBe(true);
    expect(buffer.push(output(5, 'late'))).toEqual([]);
    expect(buffer.lastPublishedSeq).toBe(4);
  });

  it('drops events numbered above a known closed (closed always has the highest seq)', () => {
    const buffer = new ReorderBuffer('p1');
    buffer.push(closed(3));
    expect(buffer.push(output(4, 'x'))).toEqual([]);
    expect(buffer.pendingCount).toBe(1);
  });

  it('reports the first hole for gap-filling reads', () => {
    const buffer = new ReorderBuffer('p1');
    buffer.push(output(1, 'a'));
    expect(buffer.missingRange()).toBeUndefined();
    pushAll(buffer, [output(9, 'i'), output(5, 'e'), output(7, 'g')]);
    expect(buffer.missingRange()).toEqual({ from: 2, to: 4 });
  });

  it('tracks a pending exit as seen before it is published', () => {
    const buffer = new ReorderBuffer('p1');
    buffer.push(exited(2, 3));
    expect(buffer.exitSeen).toBe(true);
    buffer.markPendingExitSandboxDenied();
    expect(buffer.pendingAt(2)).toEqual(exited(2, 3, true));
    expect(buffer.push(output(1, 'a'))).toEqual([output(1, 'a'), exited(2, 3, true)]);
  });

  describe('limits (docs/protocol.md#our-reorder-buffer)', () => {
    it('fails with "exceeds 256 entries" when a 257th event would wait', () => {
      const buffer = new ReorderBuffer('p1');
      for (let seq = 2; seq <= 257; seq += 1) buffer.push(output(seq, 'x'));
      expect(buffer.pendingCount).toBe(256);
      const error = thrown(() => buffer.push(output(258, 'x')));
      expect(error).toBeInstanceOf(ReorderOverflowError);
      expect(plain(error)).toEqual({
        class: 'ReorderOverflowError',
        name: 'ReorderOverflowError',
        code: 'REORDER_OVERFLOW',
        processId: 'p1',
        message: 'process p1 event reorder buffer exceeds 256 entries',
      });
      expect({ failed: buffer.failed, pending: buffer.pendingCount }).toEqual({ failed: true, pending: 0 });
      expect(buffer.push(output(1, 'a'))).toEqual([]);
    });

    it('always accepts the event that fills the next gap, even with a full buffer', () => {
      const buffer = new ReorderBuffer('p1');
      for (let seq = 2; seq <= 257; seq += 1) buffer.push(output(seq, 'x'));
      expect(seqs(buffer.push(output(1, 'a')))).toEqual(Array.from({ length: 257 }, (_, i) => i + 1));
      expect(buffer.pendingCount).toBe(0);
    });

    it('fails with "exceeds 1048576 bytes" when waiting output passes 1 MiB', () => {
      const buffer = new ReorderBuffer('p1');
      const chunk = new Uint8Array(8192);
      for (let seq = 2; seq <= 129; seq += 1) buffer.push(outputBytes(seq, chunk));
      expect(buffer.pendingBytes).toBe(1_048_576);
      expect(plain(thrown(() => buffer.push(outputBytes(130, chunk))))).toEqual(
        plain(new ReorderOverflowError('p1', 'exceeds 1048576 bytes')),
      );
      expect(buffer.failed).toBe(true);
    });

    it('rejects a single event larger than the byte limit, even in order', () => {
      const buffer = new ReorderBuffer('p1', { maxPendingEvents: 4, maxPendingBytes: 10 });
      expect(plain(thrown(() => buffer.push(outputBytes(1, new Uint8Array(11)))))).toEqual(
        plain(new ReorderOverflowError('p1', 'cannot take an event of 11 bytes: it exceeds 10 bytes')),
      );
    });

    it('uses codex limits by default', () => {
      expect(new ReorderBuffer('p1').limits).toEqual({ maxPendingEvents: 256, maxPendingBytes: 1_048_576 });
      expect(DEFAULT_REORDER_LIMITS).toEqual({ maxPendingEvents: 256, maxPendingBytes: 1_048_576 });
    });
  });

  it('ignores every push after fail()', () => {
    const buffer = new ReorderBuffer('p1');
    buffer.push(output(2, 'b'));
    buffer.fail();
    expect(buffer.push(output(1, 'a'))).toEqual([]);
    expect({ failed: buffer.failed, pending: buffer.pendingCount, range: buffer.missingRange() }).toEqual({
      failed: true,
      pending: 0,
      range: undefined,
    });
  });

  it('publishes any permutation of 1..n with duplicates exactly once, in order', () => {
    const run = fc
      .integer({ min: 1, max: 60 })
      .chain((n) =>
        fc.tuple(
          fc.constant(n),
          fc.shuffledSubarray(
            Array.from({ length: 2 * n }, (_, i) => (i % n) + 1),
            { minLength: 2 * n, maxLength: 2 * n },
          ),
          fc.array(fc.integer({ min: 1, max: n }), { maxLength: n }),
        ),
      );
    fc.assert(
      fc.property(run, ([n, shuffled, extra]) => {
        const buffer = new ReorderBuffer('p1');
        const event = (seq: number): SequencedEvent => (seq === n ? closed(seq) : output(seq, `#${seq}`));
        const published = pushAll(buffer, [...shuffled, ...extra].map(event));
        expect(seqs(published)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
        expect(buffer.closedPublished).toBe(true);
      }),
    );
  });
});
