/**
 * A pty sized at start and resized live on the real 0.171.0 executor, which has neither a size in
 * `process/start` nor a `process/resize`: the wrapper sizes it, `stty -F` helpers resize it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { Environment, ExecBackend } from '../../src';
import { EnvironmentManager, InvalidTtySizeError, ResizeFailedError } from '../../src';
import { startListeningExecutor } from '../support/executor';
import type { StartWatch } from './tty-support';
import { PATH_ENV, waitForText, watchStarts } from './tty-support';

/** Prints its size at start and on each SIGWINCH; exits 0 on an interrupt. */
const SIZE_WATCHER = ['sh', '-c', 'trap "stty size" WINCH; trap "exit 0" INT; tty; stty size; echo ready; while :; do sleep 1 & wait $!; done'];

describe('a sized tty (real executor)', () => {
  let manager: EnvironmentManager;
  let environment: Environment;
  let backend: ExecBackend;
  let starts: StartWatch;
  const scratch = mkdtempSync(join(tmpdir(), 'exec-rx-tty-spec-'));

  beforeAll(async () => {
    const executor = await startListeningExecutor();
    manager = await EnvironmentManager.connect('tty-size', executor.url ?? '', { clientName: 'exec-rx-spec' });
    const env = manager.defaultEnvironment();
    if (env === undefined) throw new Error('no default environment');
    environment = env;
    backend = environment.getExecBackend();
  });
  beforeEach(() => {
    starts = watchStarts(backend);
  });
  afterEach(() => starts.restore());
  afterAll(async () => {
    await manager.close({ terminateProcesses: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  it('starts at 33x111, follows resize(40, 100) with SIGWINCH, lists the command as run, and removes the recorded pty path once it ended', async () => {
    const started = await backend.start({ argv: SIZE_WATCHER, cwd: '/tmp', env: PATH_ENV, tty: { rows: 33, cols: 111 } });
    const { process } = started;
    expect({ sized: started.sized, unsizedReason: started.unsizedReason, ttySize: process.ttySize }).toEqual({ sized: true, unsizedReason: undefined, ttySize: { rows: 33, cols: 111 } });
    expect(await waitForText(process, 'ready')).toMatch(/^\/dev\/pts\/\d+\r\n33 111\r\nready\r\n$/);
    await process.resize(40, 100);
    // stty sets rows, then cols: the trap may run in between once (40 111), never after the last.
    expect(await waitForText(process, '40 100\r\n')).toMatch(/ready\r\n(?:40 1(?:11|00)\r\n)?40 100\r\n$/);
    expect(process.ttySize).toEqual({ rows: 40, cols: 100 });
    expect(await firstValueFrom(environment.processes$)).toEqual([expect.objectContaining({ processId: process.processId, argv: SIZE_WATCHER, tty: true, state: 'running' })]);

    const recorded = (await firstValueFrom(starts.seen$.pipe(filter((s) => s.kind === 'wrapper')))).params.argv[4] ?? '';
    expect(recorded).toMatch(/^\/tmp\/exec-rx-tty-[0-9a-f-]{36}$/);
    expect(existsSync(recorded)).toBe(true);
    await process.interrupt();
    expect(await firstValueFrom(process.exitCode$)).toBe(0);
    // idle() waits for the helper removing the recorded path, started when the command ended.
    await backend.idle();
    expect(existsSync(recorded)).toBe(false);
    const removal = await firstValueFrom(starts.seen$.pipe(filter((s) => s.kind === 'remove')));
    expect(removal.params.argv).toEqual(['rm', '-f', '--', recorded]);
    expect(await firstValueFrom((await removal.started).process.exitCode$)).toBe(0);
    await expect(process.resize(50, 50)).rejects.toMatchObject({ code: 'RESIZE_FAILED', reason: 'ended' });
    expect({ resizeHelpers: starts.count('resize'), listed: (await firstValueFrom(environment.processes$)).map((p) => p.argv) }).toEqual({ resizeHelpers: 1, listed: [SIZE_WATCHER] });
    process.release();
  });

  it('coalesces a burst of 50 resizes: at most one helper in flight, and the pty ends at the last size asked', async () => {
    const { process } = await backend.start({ argv: SIZE_WATCHER, cwd: '/tmp', env: PATH_ENV, tty: { rows: 24, cols: 80 } });
    const pty = /^(\/dev\/pts\/\d+)\r\n/.exec(await waitForText(process, 'ready'))?.[1] ?? '';
    const burst = Array.from({ length: 50 }, (_, i) => process.resize(20 + i, 60 + i));
    await Promise.all(burst);
    // The last size asked: 69 rows, 109 cols, as the command's own trap and an independent stty see it.
    await waitForText(process, '69 109\r\n');
    const probe = await backend.start({ argv: ['stty', '-F', pty, 'size'], cwd: '/tmp', env: PATH_ENV });
    expect(await probe.process.collect()).toEqual({ stdout: '69 109\n', stderr: '', pty: '', exitCode: 0 });
    expect(process.ttySize).toEqual({ rows: 69, cols: 109 });
    const helpers = starts.count('resize');
    expect(starts.peakResizers()).toBe(1);
    expect(helpers).toBeGreaterThanOrEqual(2);
    expect(helpers).toBeLessThan(50);
    await process.interrupt();
    expect(await firstValueFrom(process.exitCode$)).toBe(0);
    probe.process.release();
    process.release();
  });

  it('refuses a bad size with INVALID_TTY_SIZE before sending anything', async () => {
    const before = await firstValueFrom(environment.processes$);
    for (const tty of [
      { rows: 0, cols: 80 },
      { rows: 24, cols: 10_001 },
      { rows: 24.5, cols: 80 },
    ]) {
      await expect(backend.start({ argv: ['true'], cwd: '/tmp', env: PATH_ENV, tty })).rejects.toBeInstanceOf(InvalidTtySizeError);
    }
    // Three calls of start, and not one process/start sent (the watch sees the raw sends).
    expect({ calls: starts.calls(), sent: starts.count('other') + starts.count('wrapper') }).toEqual({ calls: 3, sent: 0 });
    expect(await firstValueFrom(environment.processes$)).toEqual(before);
  });

  it('starts unsized and says why when the executor has no stty, or no sh; resize then rejects as unsized', async () => {
    const noStty = join(scratch, 'no-stty');
    const noSh = join(scratch, 'no-sh');
    for (const [dir, programs] of [
      [noStty, ['sh', 'echo']],
      [noSh, ['echo']],
    ] as const) {
      mkdirSync(dir);
      for (const program of programs) symlinkSync(`/bin/${program}`, join(dir, program));
    }
    for (const [dir, reason] of [
      [noStty, 'the executor has no stty or tty'],
      [noSh, 'the executor has no sh'],
    ] as const) {
      const started = await backend.start({ argv: ['echo', 'started anyway'], cwd: '/tmp', env: { PATH: dir }, tty: { rows: 33, cols: 111 } });
      expect({ sized: started.sized, unsizedReason: started.unsizedReason, ttySize: started.process.ttySize }).toEqual({ sized: false, unsizedReason: reason, ttySize: undefined });
      expect((await started.process.collect()).pty).toBe('started anyway\r\n');
      const refusal = await started.process.resize(40, 100).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(ResizeFailedError);
      expect(refusal).toMatchObject({ reason: 'unsized' });
      started.process.release();
    }
    expect(starts.count('wrapper')).toBe(0);
  });
});
