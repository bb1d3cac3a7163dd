/**
 * `Environment.processes$` (the ProcessTable behind it) and `ExecProcess.state$`, in virtual time: real
 * ExecProcesses whose events come through their inbox, a table driven by the TestScheduler.
 */
import type { Observable } from 'rxjs';

import { map } from 'rxjs/operators';
import { ClosedError } from '../../src/errors';
import { ExecProcess } from '../../src/exec/exec-process';
import type { ProcessSummary, ProcessTableOptions } from '../../src/exec/process-table';
import { ProcessTable } from '../../src/exec/process-table';
import { quietSession } from '../support/quiet-session';
import type { ReadResponse } from '../../src/wire/process';
import { testScheduler } from '../support/marbles';

/** A recovery read bringing one output chunk (seq 1), then optionally the exit (seq 2) and the close (seq 3). */
const read = (end: 'running' | 'exited' | 'closed', exitCode = 0): ReadResponse => ({
  chunks: [{ seq: 1, stream: 'stdout', chunk: new Uint8Array([0x61]) }],
  nextSeq: end === 'running' ? 2 : end === 'exited' ? 3 : 4,
  exited: end !== 'running',
  exitCode: end === 'running' ? null : exitCode,
  closed: end === 'closed',
  failure: null,
  sandboxDenied: false,
});

/** Starts a listed process in `table` (as ExecBackend.start does once the executor spawned it). */
function start(table: ProcessTable, processId: string, argv: readonly string[] = [processId]): ExecProcess {
  const process = new ExecProcess(processId, quietSession, { listener: table });
  table.add(process, argv, false);
  return process;
}

/** A snapshot as short strings: `id:state` (with the exit code once known). */
const describe$ = (processes$: Observable<readonly ProcessSummary[]>): Observable<string> =>
  processes$.pipe(map((list) => list.map((p) => `${p.processId}:${p.state}${p.exitCode === undefined ? '' : `(${p.exitCode})`}`).join(' ')));

function table(options: ProcessTableOptions = {}): ProcessTable {
  return new ProcessTable({ ...options });
}

describe('ProcessTable (Environment.processes$)', () => {
  it('emits a snapshot on each change and replays the current one to a late subscriber', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold }) => {
      const processes = table({ scheduler, keepClosedMs: 80_000 });
      const early = describe$(processes.processes$);
      cold('1ms x').subscribe(() => start(processes, 'a', ['sh', '-c', 'echo a']));
      cold('2ms x').subscribe(() => start(processes, 'b'));
      cold('5ms x').subscribe(() => processes.get('a')?.inbox.recover(read('exited', 3)));
      cold('6ms x').subscribe(() => processes.get('a')?.inbox.recover(read('closed', 3)));
      expectObservable(early).toBe('e a b 2ms c d 3ms |', { e: '', a: 'a:running', b: 'a:running b:running', c: 'a:exited(3) b:running', d: 'a:closed(3) b:running' });
      expectObservable(describe$(processes.processes$), '---^!').toBe('---b', { b: 'a:running b:running' });
      cold('10ms x').subscribe(() => processes.end());
    });
  });

  it('lists argv, tty and times as started, keeps unchanged summaries, and freezes each snapshot', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, flush }) => {
      const processes = table({ scheduler });
      const snapshots: (readonly ProcessSummary[])[] = [];
      const subscription = processes.processes$.subscribe((list) => snapshots.push(list));
      start(processes, 'a', ['sh', '-c', 'echo hi']);
      cold('5ms x').subscribe(() => start(processes, 'b'));
      cold('12ms x').subscribe(() => processes.get('b')?.inbox.recover(read('exited', 7)));
      flush();
      expect(snapshots.at(-1)).toEqual([
        { processId: 'a', argv: ['sh', '-c', 'echo hi'], tty: false, state: 'running', exitCode: undefined, error: undefined, startedAt: 0, exitedAt: undefined },
        { processId: 'b', argv: ['b'], tty: false, state: 'exited', exitCode: 7, error: undefined, startedAt: 5, exitedAt: 12 },
      ]);
      expect(snapshots.at(-1)?.[0]).toBe(snapshots.at(-2)?.[0]);
      expect(Object.isFrozen(snapshots.at(-1))).toBe(true);
      subscription.unsubscribe();
      processes.end();
    });
  });

  it('takes an ended process off the list after keepClosedMs and releases its history', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold, flush }) => {
      const processes = table({ scheduler, keepClosedMs: 80_000 });
      const a = start(processes, 'a');
      cold('5ms x').subscribe(() => a.inbox.recover(read('closed')));
      expectObservable(describe$(processes.processes$), '^ 90s !').toBe('a 4ms (xb) 79996ms c', { a: 'a:running', x: 'a:exited(0)', b: 'a:closed(0)', c: '' });
      flush();
      expect(processes.get('a')).toBeUndefined();
      expect(a.retained.events).toBe(0);
      processes.end();
    });
  });

  it('keeps at most keepClosed ended processes: the oldest ended leaves first, running ones stay', () => {
    const processes = table({ keepClosed: 2, keepClosedMs: 80_000 });
    const lists: string[] = [];
    const subscription = describe$(processes.processes$).subscribe((list) => lists.push(list));
    const [a, b, c] = [start(processes, 'a'), start(processes, 'b'), start(processes, 'c')];
    start(processes, 'r');
    b.inbox.recover(read('closed'));
    a.inbox.recover(read('closed'));
    c.inbox.recover(read('closed'));
    expect(lists.at(-1)).toBe('a:closed(0) c:closed(0) r:running');
    expect(b.retained.events).toBe(0);
    expect(a.retained.events).toBe(3);
    subscription.unsubscribe();
    processes.end();
  });

  it('takes a process off the list when released once ended; a running one released leaves when it ends', () => {
    const processes = table({ keepClosedMs: 80_000 });
    const lists: string[] = [];
    const subscription = describe$(processes.processes$).subscribe((list) => lists.push(list));
    const a = start(processes, 'a');
    const b = start(processes, 'b');
    a.inbox.recover(read('closed'));
    a.release();
    expect(lists.at(-1)).toBe('b:running');
    b.release();
    expect(lists.at(-1)).toBe('b:running');
    b.inbox.recover(read('closed'));
    expect(lists.at(-1)).toBe('');
    expect(processes.size).toBe(0);
    subscription.unsubscribe();
    processes.end();
  });

  it('tells onDelisted once when a process leaves the list (released once ended, or evicted), never while it is listed', () => {
    const processes = table({ keepClosed: 1, keepClosedMs: 80_000 });
    const delisted: string[] = [];
    const listed = (processId: string, onDelisted = (): void => void delisted.push(processId)): ExecProcess => {
      const process = new ExecProcess(processId, quietSession, { listener: processes });
      processes.add(process, [processId], false, onDelisted);
      return process;
    };
    const [a, b, c, d] = [listed('a'), listed('b'), listed('c'), listed('d')];
    b.release();
    expect(delisted).toEqual([]);
    a.inbox.recover(read('closed'));
    a.release();
    a.release();
    b.inbox.recover(read('closed'));
    c.inbox.recover(read('closed'));
    expect(delisted).toEqual(['a', 'b']);
    // The environment ends: its processes stay listed (failed), only the keepClosed eviction goes on.
    processes.end();
    d.inbox.fail(new ClosedError('environment manager closed'));
    expect({ delisted, d: processes.get('d'), size: processes.size }).toEqual({ delisted: ['a', 'b', 'c'], d, size: 1 });
  });

  it('keeps the list whole when an onDelisted hook throws', () => {
    const processes = table({ keepClosed: 1, keepClosedMs: 80_000 });
    const lists: string[] = [];
    const subscription = describe$(processes.processes$).subscribe((list) => lists.push(list));
    const t = new ExecProcess('t', quietSession, { listener: processes });
    processes.add(t, ['t'], false, () => {
      throw new Error('a failing hook');
    });
    const u = start(processes, 'u');
    t.inbox.recover(read('closed'));
    expect(() => u.inbox.recover(read('closed'))).not.toThrow();
    expect({ list: lists.at(-1), t: processes.get('t'), released: t.retained.events }).toEqual({ list: 'u:closed(0)', t: undefined, released: 0 });
    subscription.unsubscribe();
    processes.end();
  });

  it('completes when the environment ends, after the list that shows its processes failed; no timer is left', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold, flush }) => {
      const processes = table({ scheduler, keepClosedMs: 80_000 });
      const a = start(processes, 'a');
      cold('2ms x').subscribe(() => {
        a.inbox.fail(new ClosedError('environment manager closed'));
        processes.end();
      });
      expectObservable(describe$(processes.processes$)).toBe('a 1ms (b|)', { a: 'a:running', b: 'a:failed' });
      expectObservable(describe$(processes.processes$), '---^').toBe('---(b|)', { b: 'a:failed' });
      flush();
      expect(scheduler.actions).toEqual([]);
    });
  });
});

describe('ExecProcess.state$', () => {
  it('replays the current state, emits each change and completes after closed', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold }) => {
      const process = new ExecProcess('p', quietSession, { scheduler });
      cold('2ms x').subscribe(() => process.inbox.recover(read('exited', 1)));
      cold('4ms x').subscribe(() => process.inbox.recover(read('closed', 1)));
      expectObservable(process.state$).toBe('r 1ms e 1ms (c|)', { r: 'running', e: 'exited', c: 'closed' });
      expectObservable(process.state$, '---^').toBe('---e(c|)', { e: 'exited', c: 'closed' });
      expectObservable(process.state$, '-----^').toBe('-----(c|)', { c: 'closed' });
    });
  });

  it('completes after failed, from running or exited', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold }) => {
      const process = new ExecProcess('p', quietSession, { scheduler });
      cold('3ms x').subscribe(() => process.inbox.fail(new ClosedError('gone')));
      expectObservable(process.state$).toBe('r 2ms (f|)', { r: 'running', f: 'failed' });
    });
  });

  it('has no observers left once it completed (a finished process holds none)', () => {
    const process = new ExecProcess('p', quietSession);
    const states: string[] = [];
    process.state$.subscribe((s) => states.push(s));
    process.inbox.recover(read('closed', 0));
    expect(states).toEqual(['running', 'exited', 'closed']);
    expect(process.failure).toBeUndefined();
    expect(Reflect.get(Reflect.get(process, 'status') as object, 'observers')).toEqual([]);
  });
});
