/**
 * The executor harness's timers in virtual time, with stand-in binaries (shell scripts, not codex): the
 * start timeout and the stop's SIGKILL grace run on the `scheduler` option, so they fire when that
 * clock says, and not a virtual millisecond before. The children are real; only time is not. On a real
 * timer the start would not time out while the virtual clock moves, and the stop would not end.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecutorStartError } from '../../src/errors';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import { VirtualClock } from '../support/virtual-time';

let dir = '';
beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'exec-rx-stand-in-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An executable shell script standing in for the codex binary (it ignores the arguments it is given). */
function standIn(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return path;
}

/** Resolves once `ready()` holds, checking every few real milliseconds (real I/O comes before the timers). */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !ready(); waited += 5) {
    if (waited > 10_000) throw new Error(`not ${what} after 10 s`);
    await new Promise<void>((resolve) => setTimeout(resolve, 5));
  }
}

/** `promise`, or a rejection naming `what` when it has not settled within `ms` of real time. */
async function withinReal<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('spawnExecutor: the start timeout (virtual time)', () => {
  it('gives up after startTimeoutMs of the scheduler\'s time on an executor that never prints its URL, with ExecutorStartError', async () => {
    const clock = new VirtualClock();
    const binary = standIn('silent', 'exec sleep 100');
    let settled = false;
    const outcome = spawnExecutor({ mode: 'listen', binary, startTimeoutMs: 15_000, scheduler: clock }).then(
      () => undefined,
      (error: unknown) => error,
    );
    void outcome.then(() => (settled = true));
    // The temp dir and the spawn are real I/O: the timer is set once the child is on its way.
    await until(() => clock.actions.length > 0, 'waiting for the URL line');
    await clock.advance(14_999);
    expect(settled).toBe(false);
    await clock.advance(1);
    const error = await withinReal(outcome, 10_000, 'the start to fail');
    expect(error).toBeInstanceOf(ExecutorStartError);
    expect(error).toMatchObject({ code: 'EXECUTOR_START_FAILED', message: `failed to start codex exec-server (${binary}): executor did not start within 15000 ms` });
    expect((error as ExecutorStartError).cause).toMatchObject({ code: 'EXECUTOR_START_FAILED', message: 'executor did not start within 15000 ms' });
  });
});

describe('SpawnedExecutor.stop: the SIGKILL grace (virtual time)', () => {
  it('sends SIGKILL to an executor that ignores SIGTERM and stdin EOF once graceMs of the scheduler\'s time went by, not before', async () => {
    const clock = new VirtualClock();
    const executor = await spawnExecutor({ mode: 'stdio', binary: standIn('stubborn', "trap '' TERM\necho ready\nexec sleep 100"), scheduler: clock });
    let ready = false;
    executor.stdout?.on('data', (chunk: Buffer) => (ready ||= chunk.toString().includes('ready')));
    await until(() => ready, 'ignoring SIGTERM');
    let stopped = false;
    const stopping = executor.stop(60_000);
    void stopping.then(() => (stopped = true));
    await clock.advance(59_999);
    // Real time for SIGTERM and the end of stdin to have done what they would.
    await new Promise<void>((resolve) => setTimeout(resolve, 200));
    expect({ stopped, exitCode: executor.child.exitCode, signalCode: executor.child.signalCode }).toEqual({ stopped: false, exitCode: null, signalCode: null });
    await clock.advance(1);
    await withinReal(stopping, 10_000, 'the stop');
    expect(await executor.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });
});
