/** Coalescing of terminal resizes: one apply at a time, the last size wins, failures reported, never fatal. */
import { InvalidTtySizeError, ResizeFailedError } from '../../src/errors';
import type { TtySize } from '../../src/exec/tty-size';
import { TtyResizer } from '../../src/exec/tty-resizer';

/** An apply whose calls the spec completes one by one. */
function controlledApply(): { apply: (size: TtySize) => Promise<void>; calls: { size: TtySize; resolve(): void; reject(error: Error): void }[]; peak: () => number } {
  const calls: { size: TtySize; resolve(): void; reject(error: Error): void }[] = [];
  let running = 0;
  let peak = 0;
  const apply = (size: TtySize): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      running += 1;
      peak = Math.max(peak, running);
      const done = (): void => void (running -= 1);
      calls.push({ size, resolve: () => (done(), resolve()), reject: (error) => (done(), reject(error)) });
    });
  return { apply, calls, peak: () => peak };
}

/** Lets pending promise callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('TtyResizer', () => {
  it('runs one apply at a time and applies only the last size asked meanwhile', async () => {
    const { apply, calls, peak } = controlledApply();
    const resizer = new TtyResizer('p', { rows: 24, cols: 80 }, apply);
    const first = resizer.resize(30, 100);
    const burst = Array.from({ length: 49 }, (_, i) => resizer.resize(31 + i, 101 + i));
    await settle();
    expect(calls.map((c) => c.size)).toEqual([{ rows: 30, cols: 100 }]);
    calls[0]?.resolve();
    await first;
    await settle();
    expect(calls.map((c) => c.size)).toEqual([
      { rows: 30, cols: 100 },
      { rows: 79, cols: 149 },
    ]);
    expect(resizer.size).toEqual({ rows: 30, cols: 100 });
    calls[1]?.resolve();
    await Promise.all(burst);
    expect({ applies: calls.length, peak: peak(), size: resizer.size }).toEqual({ applies: 2, peak: 1, size: { rows: 79, cols: 149 } });
  });

  it('rejects the sizes of a failed apply with RESIZE_FAILED and goes on with the next', async () => {
    const { apply, calls } = controlledApply();
    const resizer = new TtyResizer('p', { rows: 24, cols: 80 }, apply);
    const failing = resizer.resize(30, 100);
    await settle();
    const next = resizer.resize(40, 120);
    calls[0]?.reject(new Error('stty: /dev/pts/9: No such file or directory'));
    await expect(failing).rejects.toEqual(new ResizeFailedError('p', 'failed', '30x100: stty: /dev/pts/9: No such file or directory'));
    await expect(failing).rejects.toMatchObject({ code: 'RESIZE_FAILED', reason: 'failed' });
    await settle();
    calls[1]?.resolve();
    await next;
    expect(resizer.size).toEqual({ rows: 40, cols: 120 });
  });

  it('refuses a bad size before applying anything', async () => {
    const { apply, calls } = controlledApply();
    const resizer = new TtyResizer('p', { rows: 24, cols: 80 }, apply);
    for (const [rows, cols] of [
      [0, 80],
      [24, 10_001],
      [2.5, 80],
      [Number.NaN, 80],
      [-1, -1],
    ] as const) {
      await expect(resizer.resize(rows, cols)).rejects.toBeInstanceOf(InvalidTtySizeError);
    }
    await expect(resizer.resize(0, 0)).rejects.toMatchObject({ code: 'INVALID_TTY_SIZE', rows: 0, cols: 0 });
    expect(calls).toEqual([]);
    const largest = resizer.resize(10_000, 1);
    await settle();
    calls[0]?.resolve();
    await largest;
    expect(calls.map((c) => c.size)).toEqual([{ rows: 10_000, cols: 1 }]);
  });

  it('once ended, rejects what waits and every later resize with reason ended; an apply already running still settles its own', async () => {
    const { apply, calls } = controlledApply();
    const resizer = new TtyResizer('p', { rows: 24, cols: 80 }, apply);
    const running = resizer.resize(30, 100);
    await settle();
    const waiting = resizer.resize(40, 100);
    resizer.end();
    await expect(waiting).rejects.toMatchObject({ code: 'RESIZE_FAILED', reason: 'ended' });
    await expect(resizer.resize(50, 100)).rejects.toMatchObject({ code: 'RESIZE_FAILED', reason: 'ended' });
    calls[0]?.resolve();
    await running;
    expect(calls).toHaveLength(1);
  });
});
