/**
 * `followTerminalSize`, the one follower `run --tty` and `run --host --tty` share: each `resize` of our
 * stdout sends the terminal's size then, one call at a time (a resize while one is under way sends the
 * size of then once it settled: the last size wins), the first failure worth saying is said once, and
 * after `dispose()` nothing is sent or said.
 */
import { PassThrough } from 'node:stream';
import type { SizeTarget } from '../../src/cli/terminal/terminal-size';
import { followTerminalSize, terminalSize } from '../../src/cli/terminal/terminal-size';
import type { TtySize } from '../../src/exec/tty-size';
import { turns } from './stalled-output';

/** A terminal stdout whose size the spec sets, then says so with `resize` as Node does on SIGWINCH. */
function terminal(rows: number, columns: number): { readonly io: { stdout: PassThrough & { isTTY: boolean; rows: number; columns: number } }; resize(rows: number, columns: number): void } {
  const stdout = Object.assign(new PassThrough(), { isTTY: true, rows, columns });
  return {
    io: { stdout },
    resize: (toRows, toColumns) => {
      stdout.rows = toRows;
      stdout.columns = toColumns;
      stdout.emit('resize');
    },
  };
}

/** A pty whose resizes settle when the spec says: each call recorded with its settle functions. */
function pty(describe: SizeTarget['describe'] = (error) => `resize: ${String(error)}`): {
  readonly target: SizeTarget;
  readonly calls: { readonly size: TtySize; readonly resolve: () => void; readonly reject: (error: unknown) => void }[];
} {
  const calls: { size: TtySize; resolve: () => void; reject: (error: unknown) => void }[] = [];
  return {
    calls,
    target: { resize: (size) => new Promise<void>((resolve, reject) => calls.push({ size, resolve, reject })), describe },
  };
}

describe('terminalSize', () => {
  it('is the size of a terminal stdout, and nothing for a pipe or a terminal that does not know it', () => {
    expect(terminalSize(terminal(24, 80).io)).toEqual({ rows: 24, cols: 80 });
    expect(terminalSize({ stdout: Object.assign(new PassThrough(), { isTTY: false, rows: 24, columns: 80 }) })).toBeUndefined();
    expect(terminalSize(terminal(0, 80).io)).toBeUndefined();
  });
});

describe('followTerminalSize', () => {
  it('sends the size on each resize, one call at a time, and after one under way only the last size', async () => {
    const term = terminal(24, 80);
    const { target, calls } = pty();
    const said: string[] = [];
    const follower = followTerminalSize(term.io, target, (line) => said.push(line));
    term.resize(30, 100);
    term.resize(31, 101);
    term.resize(32, 102);
    expect(calls.map((c) => c.size)).toEqual([{ rows: 30, cols: 100 }]);
    calls[0]?.resolve();
    await turns();
    expect(calls.map((c) => c.size)).toEqual([
      { rows: 30, cols: 100 },
      { rows: 32, cols: 102 },
    ]);
    calls[1]?.resolve();
    await turns();
    expect(calls).toHaveLength(2);
    follower.dispose();
    term.resize(40, 120);
    expect([calls.length, said, term.io.stdout.listenerCount('resize')]).toEqual([2, [], 0]);
  });

  it('says the first failure worth saying once, not one it words as nothing, and nothing after dispose', async () => {
    const term = terminal(24, 80);
    const { target, calls } = pty((error) => (error === 'ended' ? undefined : `resize: ${String(error)}`));
    const said: string[] = [];
    const follower = followTerminalSize(term.io, target, (line) => said.push(line));
    term.resize(25, 80);
    calls[0]?.reject('ended');
    await turns();
    term.resize(26, 80);
    calls[1]?.reject('refused');
    await turns();
    term.resize(27, 80);
    calls[2]?.reject('refused again');
    await turns();
    expect(said).toEqual(['resize: refused']);
    term.resize(28, 80);
    follower.dispose();
    calls[3]?.reject('late');
    await turns();
    expect([calls.length, said]).toEqual([4, ['resize: refused']]);
  });
});
