import { ProcessFailedError, ProcessGapError, ReorderOverflowError } from '../../src/errors';
import type { RecoveredChunk, RecoveryRead } from '../../src/exec/merge-recovery-read';
import { mergeRecoveryRead } from '../../src/exec/merge-recovery-read';
import type { SequencedEvent } from '../../src/wire/process-event';
import { ReorderBuffer } from '../../src/exec/reorder-buffer';
import { bytes, closed, exited, output, plain, thrown } from './event-builders';

const chunk = (seq: number, text: string, stream: RecoveredChunk['stream'] = 'stdout'): RecoveredChunk => ({
  seq,
  stream,
  chunk: bytes(text),
});

const read = (fields: Partial<RecoveryRead> & Pick<RecoveryRead, 'nextSeq'>): RecoveryRead => ({
  chunks: [],
  exited: false,
  exitCode: null,
  closed: false,
  failure: null,
  sandboxDenied: false,
  ...fields,
});

const bufferAfter = (events: readonly SequencedEvent[]): ReorderBuffer => {
  const buffer = new ReorderBuffer('p1');
  for (const event of events) buffer.push(event);
  return buffer;
};

describe('mergeRecoveryRead', () => {
  it('publishes the output missed after lastPublishedSeq, skipping what was already published', () => {
    const buffer = bufferAfter([output(1, 'a')]);
    const merged = mergeRecoveryRead(
      buffer,
      read({ chunks: [chunk(1, 'a'), chunk(2, 'b'), chunk(3, 'c', 'stderr')], exited: true, exitCode: 5, nextSeq: 5 }),
    );
    // seq 4 is the only missing seq of an exited process: it is the exit
    expect(merged).toEqual([output(2, 'b'), output(3, 'c', 'stderr'), exited(4, 5)]);
    expect(buffer.lastPublishedSeq).toBe(4);
  });

  it('inserts closed at the target sequence', () => {
    const buffer = bufferAfter([output(1, 'a'), exited(2, 0)]);
    const merged = mergeRecoveryRead(buffer, read({ chunks: [chunk(3, 'c')], exited: true, exitCode: 0, closed: true, nextSeq: 5 }));
    expect(merged).toEqual([output(3, 'c'), closed(4)]);
    expect(buffer.closedPublished).toBe(true);
  });

  it('synthesizes the exit at the single missing seq, between recovered chunks', () => {
    const buffer = bufferAfter([output(1, 'a')]);
    const merged = mergeRecoveryRead(
      buffer,
      read({ chunks: [chunk(3, 'c'), chunk(4, 'd')], exited: true, exitCode: 7, sandboxDenied: true, closed: true, nextSeq: 6 }),
    );
    expect(merged).toEqual([exited(2, 7, true), output(3, 'c'), output(4, 'd'), closed(5)]);
  });

  it('merges with events already pending and drops the duplicates', () => {
    const buffer = bufferAfter([output(1, 'a'), output(4, 'd'), closed(5)]);
    const merged = mergeRecoveryRead(
      buffer,
      read({ chunks: [chunk(2, 'b'), chunk(3, 'c'), chunk(4, 'd')], exited: false, closed: true, nextSeq: 6 }),
    );
    expect(merged).toEqual([output(2, 'b'), output(3, 'c'), output(4, 'd'), closed(5)]);
  });

  it('publishes pending live events above the target once the recovered run reaches them', () => {
    const buffer = bufferAfter([output(1, 'a'), output(4, 'live')]);
    const merged = mergeRecoveryRead(buffer, read({ chunks: [chunk(2, 'b'), chunk(3, 'c')], nextSeq: 4 }));
    expect(merged).toEqual([output(2, 'b'), output(3, 'c'), output(4, 'live')]);
  });

  it('accepts chunks out of order and duplicated', () => {
    const buffer = bufferAfter([]);
    const merged = mergeRecoveryRead(buffer, read({ chunks: [chunk(2, 'b'), chunk(1, 'a'), chunk(2, 'b')], nextSeq: 3 }));
    expect(merged).toEqual([output(1, 'a'), output(2, 'b')]);
  });

  it('ORs the sandbox denial into a pending exit', () => {
    const buffer = bufferAfter([exited(2, 1)]);
    const merged = mergeRecoveryRead(
      buffer,
      read({ chunks: [chunk(1, 'denied', 'stderr')], exited: true, exitCode: 1, sandboxDenied: true, nextSeq: 3 }),
    );
    expect(merged).toEqual([output(1, 'denied', 'stderr'), exited(2, 1, true)]);
  });

  it('does nothing when the target is not above lastPublishedSeq', () => {
    const buffer = bufferAfter([output(1, 'a'), output(2, 'b')]);
    expect(mergeRecoveryRead(buffer, read({ chunks: [chunk(2, 'b')], nextSeq: 3 }))).toEqual([]);
    expect(mergeRecoveryRead(buffer, read({ nextSeq: 1 }))).toEqual([]);
    expect({ last: buffer.lastPublishedSeq, failed: buffer.failed }).toEqual({ last: 2, failed: false });
  });

  it('does nothing once closed was published or the buffer failed, even for a failure', () => {
    const done = bufferAfter([exited(1, 0), closed(2)]);
    expect(mergeRecoveryRead(done, read({ failure: 'boom', nextSeq: 9 }))).toEqual([]);
    const failed = bufferAfter([]);
    failed.fail();
    expect(mergeRecoveryRead(failed, read({ chunks: [chunk(1, 'a')], nextSeq: 2 }))).toEqual([]);
  });

  describe('errors (docs/protocol.md#merging-a-recovery-read)', () => {
    const expectFailure = (buffer: ReorderBuffer, recovery: RecoveryRead, expected: Error): void => {
      const error = thrown(() => mergeRecoveryRead(buffer, recovery));
      expect(error).toBeInstanceOf(expected.constructor);
      expect(plain(error)).toEqual(plain(expected));
      expect({ failed: buffer.failed, pending: buffer.pendingCount }).toEqual({ failed: true, pending: 0 });
    };

    it('fails with the failure the read reports', () => {
      expectFailure(
        bufferAfter([]),
        read({ failure: 'exec-server transport disconnected', nextSeq: 1 }),
        new ProcessFailedError('p1', 'process failed while recovering: exec-server transport disconnected'),
      );
    });

    it('fails when a recovered chunk sits at the close sequence', () => {
      expectFailure(
        bufferAfter([]),
        read({ chunks: [chunk(1, 'output')], closed: true, nextSeq: 2 }),
        new ProcessFailedError('p1', 'process close sequence 1 conflicts with recovered output'),
      );
    });

    it('fails when a pending non-close event sits at the close sequence', () => {
      expectFailure(
        bufferAfter([exited(3, 0)]),
        read({ chunks: [chunk(1, 'a'), chunk(2, 'b')], exited: true, exitCode: 0, closed: true, nextSeq: 4 }),
        new ProcessFailedError('p1', 'process close sequence 3 conflicts with recovered output'),
      );
    });

    it('fails when a chunk exceeds the target sequence', () => {
      expectFailure(
        bufferAfter([]),
        read({ chunks: [chunk(1, 'a'), chunk(3, 'c')], nextSeq: 3 }),
        new ProcessFailedError('p1', 'recovered process output sequence 3 exceeds target sequence 2'),
      );
    });

    it('fails when the exit must be synthesized but the read has no exit code', () => {
      expectFailure(
        bufferAfter([output(1, 'a')]),
        read({ chunks: [chunk(3, 'c')], exited: true, exitCode: null, nextSeq: 4 }),
        new ProcessFailedError('p1', 'recovering exited process did not include its exit code'),
      );
    });

    it('fails with a gap when evicted output leaves seqs missing', () => {
      // 3 MiB written while detached: the executor kept seqs 423..550 only; exit 551, closed 552.
      const retained = Array.from({ length: 128 }, (_, i) => chunk(423 + i, 'x'));
      expectFailure(
        bufferAfter([]),
        read({ chunks: retained, exited: true, exitCode: 0, closed: true, nextSeq: 553 }),
        new ProcessGapError('p1', 1, 552),
      );
    });

    it('fails with a gap when a running process has a hole', () => {
      const buffer = bufferAfter([output(1, 'a')]);
      const recovery = read({ chunks: [chunk(4, 'd')], nextSeq: 5 });
      const error = thrown(() => mergeRecoveryRead(buffer, recovery));
      expect(plain(error)).toEqual({
        class: 'ProcessGapError',
        name: 'ProcessGapError',
        code: 'PROCESS_GAP',
        processId: 'p1',
        missingFromSeq: 2,
        missingToSeq: 4,
        message:
          'failed to recover process p1: process events are no longer retained while recovering through sequence 4 (missing from 2)',
      });
    });

    it('fails with a gap when the exit is known and a seq is still missing', () => {
      expectFailure(
        bufferAfter([exited(1, 0)]),
        read({ chunks: [chunk(3, 'c')], exited: true, exitCode: 0, nextSeq: 4 }),
        new ProcessGapError('p1', 2, 3),
      );
    });

    it('fails with the reorder limit error for a recovered chunk larger than the byte limit', () => {
      const buffer = new ReorderBuffer('p1', { maxPendingEvents: 8, maxPendingBytes: 4 });
      expectFailure(
        buffer,
        read({ chunks: [chunk(1, 'abcde')], nextSeq: 2 }),
        new ReorderOverflowError('p1', 'cannot take an event of 5 bytes: it exceeds 4 bytes'),
      );
    });

    it('publishes nothing from a read that fails (validated before anything is inserted)', () => {
      const buffer = bufferAfter([]);
      thrown(() => mergeRecoveryRead(buffer, read({ chunks: [chunk(1, 'a'), chunk(2, 'b'), chunk(5, 'e')], nextSeq: 6 })));
      expect(buffer.lastPublishedSeq).toBe(0);
    });
  });
});
