/**
 * The stdin FIFO wrapper against the real executor: end-of-file arrives, and only the command is listed.
 * Driven through the one start, `ExecBackend.start({ stdin: 'fifo' })`, which calls `startWithStdinFifo`.
 */
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { Environment } from '../../src';
import { EnvironmentManager } from '../../src';
import { CannotStartError } from '../../src/errors';
import { startListeningExecutor } from '../support/executor';

const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

describe("start with stdin: 'fifo' (real executor)", () => {
  let manager: EnvironmentManager;
  let environment: Environment;

  beforeAll(async () => {
    const executor = await startListeningExecutor();
    manager = await EnvironmentManager.connect('fifo-1', executor.url ?? '', { clientName: 'exec-rx-spec' });
    const env = manager.defaultEnvironment();
    if (env === undefined) throw new Error('no default environment');
    environment = env;
  });
  afterAll(async () => {
    await manager.close({ terminateProcesses: true });
  });

  it('gives the command its stdin with end-of-file, and lists only the command, with its own argv', async () => {
    const { process, feeder, noStdinReason } = await environment.getExecBackend().start({ argv: ['wc', '-c'], cwd: '/tmp', env: PATH_ENV, stdin: 'fifo' });
    expect(noStdinReason).toBeUndefined();
    if (feeder === undefined) throw new Error('no feeder');
    expect(await feeder.write(new Uint8Array(Buffer.from('hello fifo\n')))).toBe(true);
    await feeder.end();
    const { stdout, exitCode } = await process.collect();
    await feeder.dispose();
    expect({ stdout: stdout.trim(), exitCode }).toEqual({ stdout: '11', exitCode: 0 });
    const list = await firstValueFrom(environment.processes$.pipe(filter((l) => l.every((p) => p.state === 'closed'))));
    expect(list).toEqual([expect.objectContaining({ processId: process.processId, argv: ['wc', '-c'], state: 'closed', exitCode: 0 })]);
    expect(environment.getProcess(process.processId)).toBe(process);
  });

  it('refuses a missing program with 127, as a shell would, leaving nothing listed', async () => {
    const before = await firstValueFrom(environment.processes$);
    const error = await environment
      .getExecBackend()
      .start({ argv: ['no-such-program-exec-rx'], cwd: '/tmp', env: PATH_ENV, stdin: 'fifo' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CannotStartError);
    expect(error).toMatchObject({ exitCode: 127, program: 'no-such-program-exec-rx' });
    expect(await firstValueFrom(environment.processes$)).toEqual(before);
  });
});
