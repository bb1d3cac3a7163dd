/**
 * A host restart costs nothing: `exec-rx host --data-dir` (the built cli) is killed with SIGKILL while a
 * real direct-mode executor runs a process through it, then started again on the same data dir. It binds
 * the same port; the executor's re-dial with its old registration gets 409, it re-registers (200) and
 * connects again, and it never exits. A second host on that data dir refuses to start. In process: right
 * after a 409, a registration passes a spent rate limit and a full environment table; a bad signature
 * still gets 401; without a durable state (the memory store), an unknown registration gets 409 too (the
 * executor registers again rather than exit with its processes).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostServer, HostServerOptions } from '../../../src/host/host-options';
import { startHostServer } from '../../../src/host/host-server';
import { HostState } from '../../../src/host';
import type { CliRun } from '../../cli/cli-process';
import { runCli, startCli } from '../../cli/cli-process';
import { startDirectExecutor, trackForCleanup } from '../../support/executor';
import { ApiClient, paths } from '../api/api-client';
import { register, upgrade } from '../signed-client';

jest.setTimeout(120_000);

const KEY_ID = 'AKIDRESTARTSPEC';
const SECRET = 'restart-spec-secret-do-not-print';
const TOKEN = 'restart-spec-operator-token-do-not-print';
const CREDENTIALS = { accessKeyId: KEY_ID, secretAccessKey: SECRET };
const ENV = 'restarted-1';

/** Whether a process with that pid exists. */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every file under `dir` (relative paths), but the output logs. */
const stateFiles = (dir: string, prefix = ''): string[] =>
  readdirSync(join(dir, prefix)).flatMap((name) => {
    const path = join(prefix, name);
    if (path === 'processes') return [];
    return statSync(join(dir, path)).isDirectory() ? stateFiles(dir, path) : [path];
  });

/** An upgrade url this host never issued (as a previous run of it would have). */
const previousRunUrl = (base: string, id: string): string => `${base.replace(/^http/, 'ws')}/cloud/environment/${id}/direct/connect/reg-00000000-0000-0000-0000-000000000000?token=issued-before`;

describe('exec-rx host restarted on the same data dir', () => {
  let work: string;
  const dataDir = (): string => join(work, 'data');
  const hostEnv = (): NodeJS.ProcessEnv => ({ ...process.env, EXEC_RX_ACCESS_KEY_ID: KEY_ID, EXEC_RX_SECRET_ACCESS_KEY: SECRET, EXEC_RX_OPERATOR_TOKEN: TOKEN });
  const hostArgs = (): string[] => ['host', '--port', '0', '--data-dir', dataDir()];

  /** Starts the host; resolves with its run and base url once it listens. */
  async function startHost(): Promise<{ run: CliRun; base: string }> {
    const run = startCli(hostArgs(), hostEnv());
    await run.waitFor('stdout', '--environment-id <environment-id>\n');
    const base = /^exec-rx host listening on (\S+)$/m.exec(run.stdout.map((c) => c.text).join(''))?.[1];
    if (base === undefined) throw new Error(`no url: ${run.stdout.map((c) => c.text).join('')}`);
    return { run, base };
  }

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-restart-handshake-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('the executor re-registers after a 409, connects again and keeps running; a second host is refused', async () => {
    const first = await startHost();
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId: ENV, credentials: CREDENTIALS });
    let second: { run: CliRun; base: string } | undefined;
    try {
      await first.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const started = await new ApiClient(first.base, TOKEN).post(paths.processes(ENV), { argv: ['sleep', '30'] });
      expect(started.status).toBe(201);
      first.run.child.kill('SIGKILL');
      expect(await first.run.done).toEqual({ code: null, signal: 'SIGKILL' });
      // A host of before that kept no registration (its write failed, or an older data dir): the
      // executor's url names one this host does not know.
      rmSync(join(work, 'data', 'registrations'), { recursive: true, force: true });

      second = await startHost();
      expect(second.base).toBe(first.base);
      await second.run.waitFor('stderr', `upgrade for ${ENV}: registration of a previous run (409, the executor re-registers)`);
      await second.run.waitFor('stderr', `registration for ${ENV}: accepted`);
      await second.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      expect(alive(executor.pid)).toBe(true);
      expect(await Promise.race([executor.exited, Promise.resolve('running')])).toBe('running');

      // The environment serves again: a process starts through the new host.
      const again = await new ApiClient(second.base, TOKEN).post(paths.processes(ENV), { argv: ['true'] });
      expect(again.status).toBe(201);

      const refused = await runCli(hostArgs(), '', hostEnv());
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`the data dir is in use by host pid ${second.run.child.pid}`);
      expect(refused.stdout).toBe('');

      // What the data dir keeps is ids, a port and times: no secret, no token.
      const files = stateFiles(dataDir()).sort();
      expect(files).toEqual(['environments/restarted-1.json', 'host.json', 'host.lock', 'registrations/restarted-1.json']);
      expect(JSON.parse(readFileSync(join(dataDir(), 'registrations/restarted-1.json'), 'utf8'))).toEqual({
        version: 1,
        id: ENV,
        registrationId: expect.stringMatching(/^reg-/) as unknown,
        accessKeyId: CREDENTIALS.accessKeyId,
        tokenDigest: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
      });
      for (const file of files) {
        const text = readFileSync(join(dataDir(), file), 'utf8');
        for (const secret of [SECRET, TOKEN, 'token=']) expect(text).not.toContain(secret);
      }
      // Each host claimed the environment as its owner: the restarted one at the next epoch.
      expect(JSON.parse(readFileSync(join(dataDir(), 'environments', `${ENV}.json`), 'utf8'))).toMatchObject({ id: ENV, accessKeyId: KEY_ID, epoch: 2, owner: expect.any(String) as unknown });
    } finally {
      await executor.stop();
      second?.run.child.kill('SIGTERM');
      expect(await second?.run.done).toEqual(second === undefined ? undefined : { code: 0, signal: null });
    }
    // A graceful stop releases the lock.
    expect(stateFiles(dataDir()).sort()).toEqual(['environments/restarted-1.json', 'host.json', 'registrations/restarted-1.json']);
  });
});

describe('the handshake rules of a host with a state', () => {
  let dir: string;
  let state: HostState | undefined;
  const hosts: HostServer[] = [];
  const start = async (options: Partial<HostServerOptions>, log: string[] = []): Promise<HostServer> => {
    const host = trackForCleanup(await startHostServer({ credentials: new Map([[KEY_ID, SECRET]]), log: (line) => log.push(line), ...options }));
    hosts.push(host);
    return host;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'exec-rx-handshake-rules-'));
  });
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((host) => host.close()));
    await state?.close();
    state = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a registration right after a 409 with 200, never 429 or 503, whatever the limits', async () => {
    state = await HostState.open(dir);
    await state.setSession('remembered-1', { sessionId: 'session-before', accessKeyId: KEY_ID }, 0);
    const log: string[] = [];
    const host = await start({ state, maxHandshakesPerSecond: 1, handshakeBurst: 1, maxEnvironments: 1 }, log);

    expect(await upgrade(previousRunUrl(host.url, ENV), CREDENTIALS)).toEqual({ status: 409 });
    // The one handshake a second is spent: a stranger waits...
    expect((await register(host.url, 'stranger-1', CREDENTIALS)).status).toBe(429);
    // ...but the environment answered 409 re-registers at once, and so does one the data dir remembers,
    // though one environment is the limit.
    expect((await register(host.url, ENV, CREDENTIALS)).status).toBe(200);
    expect((await register(host.url, 'remembered-1', CREDENTIALS)).status).toBe(200);
    expect(log).toContain(`upgrade for ${ENV}: registration of a previous run (409, the executor re-registers)`);
    expect(log.filter((line) => line.startsWith('registration for ')).map((line) => line.replace(/\(reg-[^)]+\)/, '(reg-…)'))).toEqual([
      `registration for ${ENV}: accepted (reg-…)`,
      'registration for remembered-1: accepted (reg-…)',
    ]);
  });

  it('still answers 401 to a bad signature, and to a known environment signing with a wrong secret', async () => {
    state = await HostState.open(dir);
    const log: string[] = [];
    const host = await start({ state }, log);
    expect(await upgrade(previousRunUrl(host.url, ENV), { accessKeyId: KEY_ID, secretAccessKey: 'not-the-secret' })).toEqual({ status: 401 });
    expect(await upgrade(previousRunUrl(host.url, ENV), { accessKeyId: 'AKIDUNKNOWN', secretAccessKey: SECRET })).toEqual({ status: 401 });
    expect(await upgrade(previousRunUrl(host.url, ENV), CREDENTIALS)).toEqual({ status: 409 });
    expect((await register(host.url, ENV, { accessKeyId: KEY_ID, secretAccessKey: 'not-the-secret' })).status).toBe(401);
    expect(log).toContain(`upgrade for ${ENV}: signature mismatch: refused (401)`);
  });

  it('without a durable state (memory), an unknown registration gets 409 too, and the registration that follows is accepted', async () => {
    const log: string[] = [];
    const host = await start({}, log);
    expect(await upgrade(previousRunUrl(host.url, ENV), CREDENTIALS)).toEqual({ status: 409 });
    expect((await register(host.url, ENV, CREDENTIALS)).status).toBe(200);
    // A bad signature is still no executor of ours: 401.
    expect(await upgrade(previousRunUrl(host.url, ENV), { accessKeyId: KEY_ID, secretAccessKey: 'not-the-secret' })).toEqual({ status: 401 });
    expect(log).toContain(`upgrade for ${ENV}: registration of a previous run (409, the executor re-registers)`);
  });

  it('binds the port the data dir remembers when none is given, and says so when it is taken', async () => {
    state = await HostState.open(dir);
    const first = await start({ state });
    const port = Number(new URL(first.url).port);
    expect(state.port).toBe(port);
    await expect(start({ state, port: 0 })).rejects.toThrow(`port ${port}, which this data dir's host bound before (its executors re-dial it), is in use: free it, or choose a port explicitly`);
    await first.close();
    const again = await start({ state });
    expect(again.url).toBe(first.url);
  });
});
