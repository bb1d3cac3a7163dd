import { ProcessFailedError, ProtocolError } from '../../src/errors';
import { EventHistory } from '../../src/exec/event-history';
import { bytesOf, exitCodeOf, linesOf, textOf } from '../../src/exec/output-views';
import type { FailedEvent, ProcessEvent, TruncatedEvent } from '../../src/exec/process-event';
import { ReplayTruncatedError } from '../../src/exec/replay-truncated-error';
import { testScheduler } from '../support/marbles';
import { bytes, closed, exited, output, outputBytes, plain } from './event-builders';

const error = new ProcessFailedError('p1', 'failed to recover process p1: boom');
const failed: FailedEvent = { type: 'failed', error };
const marker: TruncatedEvent = { type: 'truncated', nextSeq: 7, droppedEvents: 6, droppedBytes: 600 };

/** The UTF-8 bytes of `text` cut at the given byte offsets, as stdout output events from seq 1. */
const split = (text: string, cuts: readonly number[], stream: 'stdout' | 'stderr' = 'stdout'): ProcessEvent[] => {
  const all = bytes(text);
  const edges = [0, ...cuts, all.byteLength];
  return edges.slice(1).map((end, i) => outputBytes(i + 1, all.subarray(edges[i] ?? 0, end), stream));
};

describe('bytesOf', () => {
  it('emits the chunks of every stream and completes at closed', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = { a: output(1, 'a'), e: output(2, 'e', 'stderr'), x: exited(3, 0), c: closed(4) };
      const out = { a: bytes('a'), e: bytes('e') };
      expectObservable(cold('-a-e-x-c', events).pipe(bytesOf())).toBe('-a-e---|', out);
    });
  });

  it('selects one stream or several', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = { a: output(1, 'a'), e: output(2, 'e', 'stderr'), p: output(3, 'p', 'pty'), c: closed(4) };
      const out = { a: bytes('a'), e: bytes('e'), p: bytes('p') };
      expectObservable(cold('-a-e-p-c', events).pipe(bytesOf('stderr'))).toBe('---e---|', out);
      expectObservable(cold('-a-e-p-c', events).pipe(bytesOf(['stdout', 'pty']))).toBe('-a---p-|', out);
    });
  });

  it('errors with the failure of a failed process', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-f', { a: output(1, 'a'), f: failed }).pipe(bytesOf())).toBe('-a-#', { a: bytes('a') }, error);
    });
  });

  it('errors loudly at a truncation marker, unless truncation is allowed', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const events = { t: marker, a: output(7, 'a'), c: closed(8) };
      expectObservable(cold('ta-c', events).pipe(bytesOf())).toBe('#', undefined, new ReplayTruncatedError(marker));
      expectObservable(cold('ta-c', events).pipe(bytesOf(undefined, { allowTruncated: true }))).toBe('-a-|', {
        a: bytes('a'),
      });
    });
  });

  it('names what was dropped in its truncation error', () => {
    expect(plain(new ReplayTruncatedError(marker))).toEqual({
      class: 'ReplayTruncatedError',
      name: 'ReplayTruncatedError',
      code: 'PROCESS_GAP',
      nextSeq: 7,
      droppedEvents: 6,
      droppedBytes: 600,
      message:
        'process history was truncated before this subscriber: 6 event(s) (600 output bytes) before sequence 7 were dropped',
    });
  });

  it('unsubscribes from the source at closed', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-c-a', { a: output(1, 'a'), c: closed(2) });
      expectObservable(source.pipe(bytesOf())).toBe('-a-|', { a: bytes('a') });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });
});

describe('textOf', () => {
  it('decodes multi-byte characters and emoji split across chunks', () => {
    const text = 'héllo 😀 wörld';
    // é is 2 bytes (offset 1), 😀 is 4 bytes (offset 7): cut inside both, and the emoji byte by byte
    testScheduler().run(({ cold, expectObservable }) => {
      const events = [...split(text, [2, 8, 9, 10]), closed(6)];
      const v = Object.fromEntries(events.map((e, i) => [String.fromCharCode(97 + i), e]));
      expectObservable(cold('abcdef', v).pipe(textOf())).toBe('ab--e|', { a: 'h', b: 'éllo ', e: '😀 wörld' });
    });
  });

  it('keeps one decoder per stream when several are selected', () => {
    const euro = bytes('€'); // 3 bytes
    const v: Record<string, ProcessEvent> = {
      a: outputBytes(1, euro.subarray(0, 1)),
      b: outputBytes(2, euro.subarray(0, 2), 'stderr'),
      c: outputBytes(3, euro.subarray(1)),
      d: outputBytes(4, euro.subarray(2), 'stderr'),
      e: closed(5),
    };
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('abcde', v).pipe(textOf(['stdout', 'stderr']))).toBe('--cd|', { c: '€', d: '€' });
    });
  });

  it('flushes an incomplete sequence as U+FFFD at completion', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const v = { a: outputBytes(1, bytes('ok€').subarray(0, 4)), c: closed(2) };
      expectObservable(cold('a-c', v).pipe(textOf())).toBe('a-(c|)', { a: 'ok', c: '\uFFFD' });
    });
  });
});

describe('linesOf', () => {
  it('splits lines across chunks, strips \\r, keeps empty lines and emits the unterminated tail at the end', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const v = { a: output(1, 'one\r\ntw'), b: output(2, 'o\n\nthr'), c: output(3, 'ee'), z: closed(4) };
      // (be) spans frames 2 to 5, so (d|) lands on frame 6 with closed
      expectObservable(cold('a-b-c-z', v).pipe(linesOf())).toBe('a-(be)(d|)', { a: 'one', b: 'two', e: '', d: 'three' });
    });
  });

  it('splits each stream on its own and decodes UTF-8 across chunk boundaries', () => {
    const events: ProcessEvent[] = [
      ...split('naïve\nline\n', [3], 'stdout'),
      output(3, 'err ', 'stderr'),
      output(4, 'out\n'),
      output(5, 'tail\n', 'stderr'),
      closed(6),
    ];
    testScheduler().run(({ cold, expectObservable }) => {
      const v = Object.fromEntries(events.map((e, i) => [String.fromCharCode(97 + i), e]));
      expectObservable(cold('a-b-c-d-e-f', v).pipe(linesOf(['stdout', 'stderr']))).toBe('--(nl)o-t-|', {
        n: 'naïve',
        l: 'line',
        o: 'out',
        t: 'err tail',
      });
    });
  });
});

describe('exitCodeOf', () => {
  it('emits the exit code at exited and completes, without waiting for closed', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-x-a-c', { x: exited(1, 3), a: output(2, 'late'), c: closed(3) });
      expectObservable(source.pipe(exitCodeOf())).toBe('-(x|)', { x: 3 });
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('errors with the failure of a process that failed before exiting', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-f', { a: output(1, 'a'), f: failed }).pipe(exitCodeOf())).toBe('---#', undefined, error);
    });
  });

  it('errors when the events end without an exit', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const noExit = new ProtocolError('process events ended without an exit event');
      expectObservable(cold('-a-c', { a: output(1, 'a'), c: closed(2) }).pipe(exitCodeOf())).toBe('---#', undefined, noExit);
      expectObservable(cold('-a-|', { a: output(1, 'a') }).pipe(exitCodeOf())).toBe('---#', undefined, noExit);
    });
  });

  it('blames the truncation when the exit was dropped from the history', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('t-c', { t: marker, c: closed(8) }).pipe(exitCodeOf())).toBe(
        '--#',
        undefined,
        new ReplayTruncatedError(marker),
      );
    });
  });
});

describe('views over an EventHistory', () => {
  it('give a late subscriber the replayed text, then the live text', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      const history = new EventHistory();
      const v = { a: output(1, 'one\ntw'), b: output(2, 'o\n'), x: exited(3, 0), c: closed(4) };
      hot('-a--b-x-c', v).subscribe((event) => history.append(event));
      expectObservable(history.events$.pipe(linesOf()), '--^').toBe('--a-b---|', { a: 'one', b: 'two' });
    });
  });

  it('refuse a truncated replay unless told to accept it', () => {
    const history = new EventHistory({ maxEvents: 2 });
    for (const event of [output(1, 'a'), output(2, 'b'), output(3, 'c'), closed(4)]) history.append(event);
    const errors: unknown[] = [];
    history.events$.pipe(textOf()).subscribe({ error: (e: unknown) => errors.push(plain(e)) });
    expect(errors).toEqual([plain(new ReplayTruncatedError({ type: 'truncated', nextSeq: 3, droppedEvents: 2, droppedBytes: 2 }))]);
    const text: string[] = [];
    history.events$.pipe(textOf(undefined, { allowTruncated: true })).subscribe((t) => text.push(t));
    expect(text).toEqual(['c']);
  });
});
