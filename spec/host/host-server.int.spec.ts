/**
 * The direct-transport host against the real executor (`codex exec-server --remote ... --remote-transport
 * direct --aws-sigv4`): joining, running a command, a dropped socket re-dialled and adopted as a
 * replacement, an executor restarted under the same id becoming a new generation — with everything the
 * host writes captured and searched for secrets.
 */
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { distinctUntilChanged, filter, map, take, toArray } from 'rxjs/operators';
import type { Environment, ExecProcess } from '../../src';
import type { HostServer } from '../../src/host/host-options';
import type { HostedEnvironment } from '../../src/host/hosted-environment';
import { startHostServer } from '../../src/host/host-server';
import { startDirectExecutor, trackForCleanup } from '../support/executor';

const CREDENTIALS = { accessKeyId: 'AKIDHOSTSPEC', secretAccessKey: 'host-spec-secret-do-not-print' };
const ENV_SECRET = 'process-env-secret-do-not-print';
const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** Everything the host writes: its log, and anything written to this process's stdout/stderr meanwhile. */
const written: string[] = [];
const spies: jest.SpyInstance[] = [];

/** The first `count` (generation, state) values of one environment, each change once (the current one first). */
function statesOf(host: HostServer, id: string, count: number): Promise<string[]> {
  return lastValueFrom(
    host.environments$.pipe(
      map((list) => list.find((e) => e.id === id)),
      filter((e): e is HostedEnvironment => e !== undefined),
      map((e) => `${e.generation}:${e.state}`),
      distinctUntilChanged(),
      take(count),
      toArray(),
    ),
  );
}

/** The environment once `id` reaches generation `generation` connected. */
const connected = (host: HostServer, id: string, generation = 1): Promise<Environment> =>
  firstValueFrom(
    host.environments$.pipe(
      map((list) => list.find((e) => e.id === id && e.generation === generation && e.state === 'connected')?.environment),
      filter((e): e is Environment => e !== undefined),
    ),
  );

const stateReached = (host: HostServer, id: string, state: string): Promise<unknown> =>
  firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === id && e.state === state))));

/** Resolves once `process` printed `text` on stdout. */
const printed = (process: ExecProcess, text: string): Promise<unknown> =>
  firstValueFrom(process.text$('stdout').pipe(
    map((() => {
      let all = '';
      return (chunk: string) => (all += chunk);
    })()),
    filter((all) => all.includes(text)),
  ));

describe('host server with the real executor in direct mode', () => {
  let host: HostServer;

  beforeAll(async () => {
    // Spies call through; what they saw is read at the end.
    spies.push(jest.spyOn(process.stdout, 'write'), jest.spyOn(process.stderr, 'write'));
    host = trackForCleanup(await startHostServer({ credentials: new Map([[CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey]]), log: (line) => written.push(line) }));
  });
  afterAll(() => {
    for (const spy of spies) spy.mockRestore();
  });

  it('lets a correctly signed executor join and run a command', async () => {
    const states = statesOf(host, 'join-1', 2);
    await startDirectExecutor({ remoteUrl: host.url, environmentId: 'join-1', credentials: CREDENTIALS });
    const environment = await connected(host, 'join-1');
    expect(await states).toEqual(['1:starting', '1:connected']);
    const info = await firstValueFrom(host.environments$.pipe(map((l) => l.find((e) => e.id === 'join-1')?.info), filter((i) => i !== undefined)));
    expect(info?.executorVersion).toBe('0.171.0');

    const { process } = await environment.getExecBackend().start({ argv: ['sh', '-c', 'echo "hi $SPEC_SECRET" | wc -c; echo err >&2; exit 4'], cwd: '/tmp', env: { ...PATH_ENV, SPEC_SECRET: ENV_SECRET } });
    const result = await process.collect();
    expect(result).toEqual({ stdout: `${`hi ${ENV_SECRET}`.length + 1}\n`, stderr: 'err\n', pty: '', exitCode: 4 });
  });

  it('adopts a dropped and re-dialled socket as a replacement: same generation, the process carries on', async () => {
    await startDirectExecutor({ remoteUrl: host.url, environmentId: 'drop-1', credentials: CREDENTIALS });
    const environment = await connected(host, 'drop-1');
    const { process } = await environment.getExecBackend().start({ argv: ['cat'], cwd: '/tmp', env: PATH_ENV, pipeStdin: true });
    const one = printed(process, 'one');
    await process.write('one\n');
    await one;

    const states = statesOf(host, 'drop-1', 3);
    const disconnected = stateReached(host, 'drop-1', 'disconnected');
    expect(host.dropSocket('drop-1')).toBe(true);
    await disconnected;
    await connected(host, 'drop-1');
    const two = printed(process, 'two');
    await process.write('two\n');
    await two;
    await process.terminate();
    expect(await firstValueFrom(process.exitCode$)).toBe(137);
    expect(await states).toEqual(['1:connected', '1:disconnected', '1:connected']);
    expect(host.dropSocket('no-such-environment')).toBe(false);
  });

  it('starts a new generation when the executor is killed and started again under the same id', async () => {
    const states = statesOf(host, 'restart-1', 6);
    const first = await startDirectExecutor({ remoteUrl: host.url, environmentId: 'restart-1', credentials: CREDENTIALS });
    const environment = await connected(host, 'restart-1');
    const { process } = await environment.getExecBackend().start({ argv: ['cat'], cwd: '/tmp', env: PATH_ENV, pipeStdin: true });

    await first.stop();
    await startDirectExecutor({ remoteUrl: host.url, environmentId: 'restart-1', credentials: CREDENTIALS });
    const second = await connected(host, 'restart-1', 2);
    expect(await states).toEqual(['1:starting', '1:connected', '1:disconnected', '1:failed', '2:starting', '2:connected']);
    expect(second).not.toBe(environment);
    expect(await lastValueFrom(process.events$.pipe(map((e) => e.type)))).toBe('failed');
    const { process: again } = await second.getExecBackend().start({ argv: ['echo', 'generation two'], cwd: '/tmp', env: PATH_ENV });
    expect((await again.collect()).stdout).toBe('generation two\n');
  });

  it('wrote no secret, token, signature or process environment anywhere', () => {
    const all = [...written, ...spies.flatMap((spy) => spy.mock.calls.map((call: unknown[]) => String(call[0])))].join('\n');
    expect(all).toContain('registration for join-1: accepted');
    expect(all).not.toContain(CREDENTIALS.secretAccessKey);
    expect(all).not.toContain(ENV_SECRET);
    expect(all).not.toMatch(/token=|Signature=|[0-9a-f]{64}/);
    expect(all).not.toMatch(/[A-Za-z0-9_-]{43}/); // capability tokens are 43 base64url characters
  });

});
