/**
 * `exec-rx run`'s supervisor in virtual time, with stand-ins for the process, its stdin sink and the
 * target: once the command closed, cleaning up stdin (terminating the FIFO helper) may hold up the exit
 * 3 s of `io.scheduler`'s time at most, and not at all when it finishes first. On a real timer the
 * bounded wait would not end while the virtual clock moves. A `truncated` marker makes the run end 254.
 */
import { PassThrough } from 'node:stream';
import { NEVER, of } from 'rxjs';
import type { Launched } from '../../src/cli/run/launch';
import type { OpenTarget } from '../../src/cli/run/run-target';
import { supervise } from '../../src/cli/run/run-supervisor';
import type { StdinSink } from '../../src/cli/terminal/stdin-relay';
import type { ExecProcess } from '../../src/exec/exec-process';
import type { ProcessEvent } from '../../src/exec/process-event';
import { VirtualClock } from '../support/virtual-time';

/** A command that exits with 3 and closes at once. */
const EXITS_3: ProcessEvent[] = [
  { type: 'exited', seq: 1, exitCode: 3, sandboxDenied: false },
  { type: 'closed', seq: 2 },
];

/** A command whose `events` come at once (and whose exit code, kept on the process, is `exitCode`). */
const closedProcess = (events: readonly ProcessEvent[] = EXITS_3, exitCode?: number): ExecProcess => {
  const stub = { events$: of(...events), signal: () => Promise.resolve(), terminate: () => Promise.resolve(true), exitCode };
  return stub as unknown as ExecProcess;
};

/** A stdin sink whose cleanup ends when `disposed` resolves. */
const sinkUntil = (disposed: Promise<void>): StdinSink => ({ write: () => Promise.resolve(true), end: () => Promise.resolve(), dispose: () => disposed });

/** Runs `supervise` for a command on `clock`, stdin left open; resolves with its exit status and whether it came. */
function superviseOn(clock: VirtualClock, sink: StdinSink, events?: readonly ProcessEvent[], said: string[] = [], exitCode?: number): { readonly status: Promise<number>; readonly done: () => boolean } {
  const launched: Launched = { process: closedProcess(events, exitCode), sink, tty: false };
  const target = { executorExit$: NEVER } as unknown as OpenTarget;
  const io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: '/', scheduler: clock };
  let done = false;
  const status = supervise(launched, target, io, (line) => said.push(line));
  void status.then(() => (done = true));
  return { status, done: () => done };
}

describe('supervise: the bound on cleaning up stdin (virtual time)', () => {
  it('exits at most 3 s of the scheduler\'s time after the command closed when the stdin helper does not finish', async () => {
    const clock = new VirtualClock();
    const run = superviseOn(clock, sinkUntil(new Promise<void>(() => undefined)));
    await clock.advance(2_999);
    expect(run.done()).toBe(false);
    await clock.advance(1);
    expect(run.done()).toBe(true);
    expect(await run.status).toBe(3);
  });

  it('exits at once when the stdin helper finishes first, leaving no timer behind', async () => {
    const clock = new VirtualClock();
    const run = superviseOn(clock, sinkUntil(Promise.resolve()));
    await clock.advance(0);
    expect({ done: run.done(), at: clock.now(), timers: clock.actions.length }).toEqual({ done: true, at: 0, timers: 0 });
    expect(await run.status).toBe(3);
  });
});

describe('supervise: output the executor no longer held', () => {
  it('says the note where the hole is and ends 254, its last line naming the command\'s exit code and what was lost', async () => {
    const clock = new VirtualClock();
    const said: string[] = [];
    const events: ProcessEvent[] = [
      { type: 'output', seq: 1, stream: 'stdout', chunk: new TextEncoder().encode('a') },
      { type: 'truncated', nextSeq: 9, droppedEvents: 7, droppedBytes: 4096 },
      { type: 'output', seq: 9, stream: 'stdout', chunk: new TextEncoder().encode('b') },
      { type: 'exited', seq: 10, exitCode: 0, sandboxDenied: false },
      { type: 'closed', seq: 11 },
    ];
    const run = superviseOn(clock, sinkUntil(Promise.resolve()), events, said);
    await clock.advance(0);
    expect(await run.status).toBe(254);
    expect(said).toEqual([
      'output before seq 9 is no longer held (7 events, 4096 bytes)',
      'output was lost: 7 events (4096 bytes) no longer held when they were to be written; the command exited with 0',
    ]);
  });

  it('takes the exit code kept on the process when no exited event came (it fell in the hole), and says it', async () => {
    const clock = new VirtualClock();
    const said: string[] = [];
    const events: ProcessEvent[] = [
      { type: 'output', seq: 1, stream: 'stdout', chunk: new TextEncoder().encode('a') },
      { type: 'truncated', nextSeq: 4, droppedEvents: 2, droppedBytes: 0 },
      { type: 'closed', seq: 4 },
    ];
    const run = superviseOn(clock, sinkUntil(Promise.resolve()), events, said, 3);
    await clock.advance(0);
    expect(await run.status).toBe(254);
    expect(said.at(-1)).toBe('output was lost: 2 events no longer held when they were to be written; the command exited with 3');
  });

  it('ends 255 after a line, never silently, when the exit code is nowhere', async () => {
    const clock = new VirtualClock();
    const said: string[] = [];
    const run = superviseOn(clock, sinkUntil(Promise.resolve()), [{ type: 'closed', seq: 1 }], said);
    await clock.advance(0);
    expect(await run.status).toBe(255);
    expect(said).toEqual(['the command closed, but its exit status is not known']);
  });
});
