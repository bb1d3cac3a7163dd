/** The library against the real codex 0.171.0 executor in listen mode (`--listen ws://127.0.0.1:0`). */
import { createHash } from 'node:crypto';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import type { Environment, ProcessEvent } from '../../src';
import { AuthenticationError, EnvironmentFailedError, EnvironmentManager, SpawnError } from '../../src';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { spawnExecutor } from '../../src/executor/spawn-executor';

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

describe('listen mode against the real executor', () => {
  let executor: SpawnedExecutor;
  let manager: EnvironmentManager;
  let environment: Environment;

  beforeAll(async () => {
    executor = await spawnExecutor({ mode: 'listen' });
    manager = await EnvironmentManager.connect('listen-1', executor.url ?? '', { clientName: 'exec-rx-spec' });
    const env = manager.defaultEnvironment();
    if (env === undefined) throw new Error('no default environment');
    environment = env;
  });
  afterAll(async () => {
    await manager.close({ terminateProcesses: true });
    await executor.stop();
  });

  const run = async (argv: string[], extra: { tty?: boolean; pipeStdin?: boolean } = {}) =>
    (await environment.getExecBackend().start({ argv, cwd: '/tmp', env: PATH_ENV, ...extra })).process;

  it('initializes, reports ready, and carries the environment info from initialize', async () => {
    expect(await manager.getEnvironmentStatus('listen-1')).toEqual({ status: 'ready' });
    const info = await environment.info();
    expect(info.executorVersion).toBe('0.171.0');
    expect(info.platformOs).toBe('linux');
  });

  it('starts a process and decodes its output, exit and close in seq order', async () => {
    const process = await run(['sh', '-c', 'echo out1; echo err1 >&2; exit 5']);
    const events = await lastValueFrom(process.events$.pipe(toArray()));
    const seqs = events.flatMap((e) => ('seq' in e ? [e.seq] : []));
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: 'closed' });
    expect(events.filter((e) => e.type === 'exited')).toEqual([{ type: 'exited', seq: expect.any(Number), exitCode: 5, sandboxDenied: false }]);
    const collected = await process.collect();
    expect({ stdout: collected.stdout, stderr: collected.stderr, exitCode: collected.exitCode }).toEqual({ stdout: 'out1\n', stderr: 'err1\n', exitCode: 5 });
  });

  it('delivers 10 MB of output byte-exact', async () => {
    const script = 'head -c 10000000 /dev/urandom | tee /tmp/exec-rx-10mb.$$ | cat; sha256sum /tmp/exec-rx-10mb.$$ >&2; rm -f /tmp/exec-rx-10mb.$$';
    const process = await run(['sh', '-c', script]);
    const hash = createHash('sha256');
    let bytes = 0;
    let stderr = '';
    const events: ProcessEvent[] = [];
    await new Promise<void>((resolve, reject) =>
      process.events$.subscribe({
        next: (e) => {
          if (e.type === 'output' && e.stream === 'stdout') {
            hash.update(e.chunk);
            bytes += e.chunk.byteLength;
          } else if (e.type === 'output') stderr += Buffer.from(e.chunk).toString();
          else events.push(e);
        },
        complete: resolve,
        error: reject,
      }),
    );
    expect(bytes).toBe(10_000_000);
    expect(stderr.split(' ')[0]).toBe(hash.digest('hex'));
    expect(events.map((e) => e.type)).toEqual(['exited', 'closed']);
  });

  it('separates stdout from stderr', async () => {
    const process = await run(['sh', '-c', 'for i in 1 2 3; do echo o$i; echo e$i >&2; done']);
    const [stdout, stderr] = await Promise.all([lastValueFrom(process.lines$('stdout').pipe(toArray())), lastValueFrom(process.lines$('stderr').pipe(toArray()))]);
    expect({ stdout, stderr }).toEqual({ stdout: ['o1', 'o2', 'o3'], stderr: ['e1', 'e2', 'e3'] });
  });

  it('runs a tty process on the pty stream', async () => {
    const process = await run(['sh', '-c', 'test -t 1 && echo is-a-tty'], { tty: true });
    const text = await lastValueFrom(process.text$('pty').pipe(toArray()));
    expect(text.join('')).toContain('is-a-tty');
    expect(await firstValueFrom(process.exitCode$)).toBe(0);
  });

  it('writes through cat with pipeStdin', async () => {
    const process = await run(['cat'], { pipeStdin: true });
    const firstLine = firstValueFrom(process.lines$('stdout'));
    await expect(process.write('hello\n')).resolves.toBeUndefined();
    expect(await firstLine).toBe('hello');
    expect(await process.terminate()).toBe(true);
    expect(await firstValueFrom(process.exitCode$)).toBe(137);
  });

  it('terminates with exit code 137 and then closes', async () => {
    const process = await run(['sleep', '30']);
    expect(await process.terminate()).toBe(true);
    const events = await lastValueFrom(process.events$.pipe(toArray()));
    expect(events.map((e) => (e.type === 'exited' ? `exited:${e.exitCode}` : e.type))).toEqual(['exited:137', 'closed']);
  });

  it('interrupts with exit code 130', async () => {
    const process = await run(['sleep', '30']);
    await process.interrupt();
    expect(await firstValueFrom(process.exitCode$)).toBe(130);
  });

  it('rejects a missing program with a typed spawn error', async () => {
    const error = await run(['/definitely/not/here']).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SpawnError);
    expect(error).toMatchObject({ code: 'SPAWN_FAILED', kind: 'spawnNotFound', rpcCode: -32603 });
  });
});

describe('listen mode with --ws-auth capability-token', () => {
  let executor: SpawnedExecutor;
  beforeAll(async () => {
    executor = await spawnExecutor({ mode: 'listen', wsAuthToken: 'right-token-0123456789' });
  });
  afterAll(() => executor.stop());

  it('refuses a wrong bearer token with a typed authentication error', async () => {
    const error = await EnvironmentManager.connect('auth-1', executor.url ?? '', { clientName: 'spec', headers: { Authorization: 'Bearer wrong' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'AUTHENTICATION_FAILED', httpStatus: 401 });
    expect(String(error)).not.toContain('wrong');
  });

  it('accepts the right bearer token', async () => {
    const manager = await EnvironmentManager.connect('auth-1', executor.url ?? '', { clientName: 'spec', headers: { Authorization: 'Bearer right-token-0123456789' } });
    expect(await manager.getEnvironmentStatus('auth-1')).toEqual({ status: 'ready' });
    await manager.close();
  });
});

describe('stdio mode against the real executor', () => {

  it('runs a process over newline-delimited JSON, and fails cleanly when the executor stops', async () => {
    const executor = await spawnExecutor({ mode: 'stdio' });
    try {
      const manager = await EnvironmentManager.fromStdio('stdio-1', executor.child, { clientName: 'spec' });
      const environment = manager.defaultEnvironment();
      if (environment === undefined) throw new Error('no environment');
      expect(await manager.getEnvironmentStatus('stdio-1')).toEqual({ status: 'ready' });
      const { process } = await environment.getExecBackend().start({ argv: ['sh', '-c', 'echo over-stdio'], cwd: '/tmp', env: PATH_ENV });
      expect((await process.collect()).stdout).toBe('over-stdio\n');

      const { process: sleeper } = await environment.getExecBackend().start({ argv: ['sleep', '30'], cwd: '/tmp', env: PATH_ENV });
      const states = lastValueFrom(environment.connectionState$.pipe(toArray()));
      const sleeperEvents = lastValueFrom(sleeper.events$.pipe(toArray()));
      const pendingRead = sleeper.read(0, null, 600_000);
      await executor.stop();
      expect(await pendingRead).toMatchObject({ closed: true, exited: true, failure: expect.stringContaining('failed to resume exec-server session') });
      expect((await states).map((s) => s.state)).toEqual(['connected', 'failed']);
      expect((await sleeperEvents).at(-1)).toMatchObject({ type: 'failed', error: { code: 'PROCESS_FAILED' } });
      await expect(environment.info()).resolves.toBeDefined();
      // A call on the failed environment: ENVIRONMENT_FAILED (README, Errors), the failure as its cause.
      await expect(environment.forceInfo()).rejects.toBeInstanceOf(EnvironmentFailedError);
      await expect(environment.forceInfo()).rejects.toMatchObject({ code: 'ENVIRONMENT_FAILED', environmentId: 'stdio-1', cause: { code: 'RESUME_FAILED', reason: 'noReconnect' } });
      await manager.close();
    } finally {
      await executor.stop();
    }
  });
});
