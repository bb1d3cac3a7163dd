import { of, Subject, throwError, concat } from 'rxjs';
import { ConsumerOverflowError, ProcessFailedError } from '../../src/errors';
import { toBoundedAsyncIterable } from '../../src/exec/bounded-iterator';
import { EventHistory } from '../../src/exec/event-history';
import type { ProcessEvent } from '../../src/exec/process-event';
import { closed, exited, output, plain } from './event-builders';

/** Drains `iterator`, returning its values and how it ended. */
async function drain<T>(iterator: AsyncIterator<T>): Promise<{ values: T[]; error?: unknown }> {
  const values: T[] = [];
  try {
    for (let result = await iterator.next(); result.done !== true; result = await iterator.next()) values.push(result.value);
    return { values };
  } catch (error: unknown) {
    return { values, error: plain(error) };
  }
}

describe('toBoundedAsyncIterable', () => {
  it('yields every value and ends when the source completes', async () => {
    const values: number[] = [];
    for await (const value of toBoundedAsyncIterable(of(1, 2, 3), 3)) values.push(value);
    expect(values).toEqual([1, 2, 3]);
  });

  it('subscribes eagerly, so values emitted before the first next() are kept', async () => {
    const source = new Subject<number>();
    const iterator = toBoundedAsyncIterable(source, 4);
    expect(source.observed).toBe(true);
    source.next(1);
    source.next(2);
    source.complete();
    expect(await drain(iterator)).toEqual({ values: [1, 2] });
  });

  it('hands a value straight to a consumer that is already waiting', async () => {
    const source = new Subject<string>();
    const iterator = toBoundedAsyncIterable(source, 0);
    const first = iterator.next();
    const second = iterator.next();
    source.next('a');
    source.next('b');
    source.complete();
    expect(await Promise.all([first, second, iterator.next()])).toEqual([
      { value: 'a', done: false },
      { value: 'b', done: false },
      { value: undefined, done: true },
    ]);
  });

  it('yields what was buffered before an overflow, then rejects naming how many were missed', async () => {
    const source = new Subject<number>();
    const iterator = toBoundedAsyncIterable(source, 3);
    for (let i = 1; i <= 10; i += 1) source.next(i);
    expect(await iterator.next()).toEqual({ value: 1, done: false });
    source.next(11); // still counted: after an overflow nothing is buffered again
    expect(await drain(iterator)).toEqual({
      values: [2, 3],
      error: plain(new ConsumerOverflowError(8, 3)),
    });
    expect(plain(new ConsumerOverflowError(8, 3))).toEqual({
      class: 'ConsumerOverflowError',
      name: 'ConsumerOverflowError',
      code: 'CONSUMER_OVERFLOW',
      missedEvents: 8,
      bufferSize: 3,
      message: 'consumer fell behind: buffer of 3 events overflowed, 8 event(s) missed',
    });
    expect(source.observed).toBe(false);
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  it('reports the overflow rather than a later completion or error of the source', async () => {
    const source = new Subject<number>();
    const iterator = toBoundedAsyncIterable(source, 1);
    source.next(1);
    source.next(2);
    source.error(new Error('later'));
    expect(await drain(iterator)).toEqual({ values: [1], error: plain(new ConsumerOverflowError(1, 1)) });
  });

  it('rejects with the source error after the buffered values', async () => {
    const failure = new ProcessFailedError('p1', 'failed to recover process p1: boom');
    const iterator = toBoundedAsyncIterable(concat(of(1, 2), throwError(() => failure)), 8);
    expect(await drain(iterator)).toEqual({ values: [1, 2], error: plain(failure) });
  });

  it('rejects a waiting consumer with the source error', async () => {
    const source = new Subject<number>();
    const iterator = toBoundedAsyncIterable(source, 8);
    const waiting = iterator.next();
    const failure = new Error('gone');
    source.error(failure);
    await expect(waiting).rejects.toBe(failure);
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  it('tears the subscription down when for-await breaks', async () => {
    const source = new Subject<number>();
    const iterable = toBoundedAsyncIterable(source, 8);
    source.next(1);
    source.next(2);
    for await (const value of iterable) {
      expect(value).toBe(1);
      break;
    }
    expect(source.observed).toBe(false);
    expect(await iterable.next()).toEqual({ value: undefined, done: true });
  });

  it('resolves every waiting next() as done on return(), leaving no promise pending', async () => {
    const source = new Subject<number>();
    const iterator = toBoundedAsyncIterable(source, 8);
    const waiting = [iterator.next(), iterator.next()];
    expect(await iterator.return?.()).toEqual({ value: undefined, done: true });
    expect(await Promise.all(waiting)).toEqual([
      { value: undefined, done: true },
      { value: undefined, done: true },
    ]);
    expect(source.observed).toBe(false);
  });

  it('refuses a capacity that is not a non-negative integer', () => {
    expect(() => toBoundedAsyncIterable(of(1), -1)).toThrow(new RangeError('capacity must be a non-negative integer, got -1'));
    expect(() => toBoundedAsyncIterable(of(1), 1.5)).toThrow(RangeError);
  });

  it('iterates a process history: the replay, then live events, to the end', async () => {
    const history = new EventHistory();
    history.append(output(1, 'a'));
    const iterator = toBoundedAsyncIterable<ProcessEvent>(history.events$, 16);
    history.append(exited(2, 0));
    history.append(closed(3));
    expect(await drain(iterator)).toEqual({ values: [output(1, 'a'), exited(2, 0), closed(3)] });
    expect(history.subscriberCount).toBe(0);
  });
});
