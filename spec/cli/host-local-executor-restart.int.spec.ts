/**
 * Issue 21, a host restart costs nothing, for `exec-rx host --local-executor --data-dir D` (the built cli):
 * the local executor is an executor of its own. SIGKILL the host while a process streams: the executor
 * lives on; the host started again on D does not spawn a second one, it waits for the recorded one to
 * re-dial and takes its session back, and a reader resuming by seq gets the rest and the exit code. A
 * graceful stop leaves it running too; a dead one is replaced with the same key; `exec-rx host
 * --stop-local-executor` ends it and removes its record.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, paths } from '../host/api/api-client';
import type { CliRun } from './cli-process';
import { runCli, startCli } from './cli-process';
import { outputOf } from './host-child';

jest.setTimeout(120_000);

const TOKEN = 'cli-local-restart-operator-token-do-not-print';
const ENV = 'local';
const LINES = 80;
/** A line with the shell's pid, then 80 lines, ten a second. */
const SCRIPT = `echo pid $$; i=0; while [ $i -lt ${LINES} ]; do echo line $i; i=$((i+1)); sleep 0.1; done; exit 7`;
const EXPECTED_AFTER_PID = Array.from({ length: LINES }, (_v, i) => `line ${i}\n`).join('');

const joined = (run: CliRun, stream: 'stdout' | 'stderr'): string => run[stream].map((c) => c.text).join('');


/** The live codex executors whose CODEX_HOME is `codexHome` (zombies have no command line). */
function executorsOf(codexHome: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes('exec-server')) continue;
      if (readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`CODEX_HOME=${codexHome}`)) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return found;
}

describe('exec-rx host --local-executor with a data dir, across host restarts', () => {
  let work: string;
  const dataDir = (): string => join(work, 'data');
  const codexHome = (): string => join(dataDir(), 'local-executor', 'codex-home');
  const record = (): string => join(dataDir(), 'local-executor', 'executor.json');
  const hostEnv = (): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: work, EXEC_RX_OPERATOR_TOKEN: TOKEN };
    for (const name of ['EXEC_RX_ACCESS_KEY_ID', 'EXEC_RX_SECRET_ACCESS_KEY', 'EXEC_RX_CREDENTIALS_FILE']) delete env[name];
    return env;
  };
  const startHost = async (): Promise<{ run: CliRun; base: string }> => {
    const run = startCli(['host', '--local-executor', '--port', '0', '--data-dir', dataDir()], hostEnv());
    await run.waitFor('stdout', '--environment-id <environment-id>\n');
    const base = /^exec-rx host listening on (\S+)$/m.exec(joined(run, 'stdout'))?.[1];
    if (base === undefined) throw new Error(`no url: ${joined(run, 'stdout')}`);
    return { run, base };
  };
  const startedPid = (run: CliRun): number => Number(/local executor started \(pid (\d+)/.exec(joined(run, 'stderr'))?.[1]);
  const stopExecutor = (): Promise<{ code: number | null; stdout: string; stderr: string }> => runCli(['host', '--stop-local-executor', '--data-dir', dataDir()], '', hostEnv());
  /** In finally: ends what a failed spec left (the recorded executor, or any executor of the data dir). */
  const cleanUp = async (hosts: readonly CliRun[]): Promise<void> => {
    for (const run of hosts) run.child.kill('SIGKILL');
    await Promise.all(hosts.map((run) => run.done));
    if (existsSync(record())) await stopExecutor();
    for (const pid of executorsOf(codexHome())) process.kill(pid, 'SIGKILL');
  };

  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-local-restart-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('SIGKILLed: the executor lives on, the next host adopts it and its process, and --stop-local-executor ends it', async () => {
    const hosts: CliRun[] = [];
    try {
      const first = await startHost();
      hosts.push(first.run);
      await first.run.waitFor('stderr', 'local executor started (pid ');
      const executorPid = startedPid(first.run);
      expect(executorsOf(codexHome())).toEqual([executorPid]);
      expect(statSync(join(dataDir(), 'local-executor', 'credentials.json')).mode & 0o777).toBe(0o600);
      expect(joined(first.run, 'stderr')).not.toMatch(/EXECRXLOCAL/);
      await first.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);

      const api = new ApiClient(first.base, TOKEN);
      const started = await api.post(paths.processes(ENV), { argv: ['sh', '-c', SCRIPT] });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;
      const opened = await api.events(paths.events(ENV, processId));
      if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
      await opened.stream.next((event) => event.event === 'output' && Number(event.id ?? '0') >= 4, 30_000);
      first.run.child.kill('SIGKILL');
      expect(await first.run.done).toEqual({ code: null, signal: 'SIGKILL' });
      await opened.stream.close();
      const firstRead = outputOf(opened.stream.events);
      const pid = Number(/^pid (\d+)\n/.exec(firstRead.text)?.[1]);
      expect(existsSync(`/proc/${pid}`)).toBe(true);
      expect(executorsOf(codexHome())).toEqual([executorPid]); // the host's death left it running

      const second = await startHost();
      hosts.push(second.run);
      expect(second.base).toBe(first.base);
      await second.run.waitFor('stderr', `local executor pid ${executorPid} still running: waiting for it to re-dial`);
      await second.run.waitFor('stderr', `environment ${ENV}: session `);
      await second.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      expect(joined(second.run, 'stderr')).toMatch(new RegExp(`environment ${ENV}: session \\S+ taken back: 1 process adopted, 0 lost`));
      expect(joined(second.run, 'stderr')).not.toMatch(/local executor started/);
      expect(executorsOf(codexHome())).toEqual([executorPid]);
      expect(existsSync(`/proc/${pid}`)).toBe(true);

      const again = new ApiClient(second.base, TOKEN);
      const lastSeq = firstRead.seqs[firstRead.seqs.length - 1] ?? 0;
      const resumed = await again.events(paths.events(ENV, processId), { headers: { 'last-event-id': String(lastSeq) } });
      if (!('stream' in resumed)) throw new Error(`events answered ${resumed.refused.status}: ${resumed.refused.text}`);
      const restEvents = await resumed.stream.ended(60_000);
      const rest = outputOf(restEvents);
      expect(rest.others).toEqual(['exited', 'closed']);
      expect([...firstRead.seqs, ...rest.seqs].every((seq, index) => seq === index + 1)).toBe(true);
      expect(firstRead.text + rest.text).toBe(`pid ${pid}\n${EXPECTED_AFTER_PID}`);
      expect(JSON.parse(restEvents.find((event) => event.event === 'exited')?.data ?? '{}')).toMatchObject({ exitCode: 7 });

      second.run.child.kill('SIGTERM');
      expect(await second.run.done).toEqual({ code: 0, signal: null });
      expect(joined(second.run, 'stderr')).toMatch(/the local executor keeps running/);
      expect(executorsOf(codexHome())).toEqual([executorPid]); // a graceful stop leaves it too

      const stopped = await stopExecutor();
      expect(stopped).toMatchObject({ code: 0, stdout: `local executor pid ${executorPid} ended (SIGTERM; its processes ended with it); its record is removed\n` });
      expect(executorsOf(codexHome())).toEqual([]);
      expect(existsSync(record())).toBe(false);
      expect(await stopExecutor()).toMatchObject({ code: 1, stdout: `no local executor recorded in ${dataDir()}\n` });
    } finally {
      await cleanUp(hosts);
    }
  });

  it('stopped gracefully, it leaves the executor running; a dead one is replaced with the same key', async () => {
    const hosts: CliRun[] = [];
    try {
      const first = await startHost();
      hosts.push(first.run);
      await first.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const executorPid = startedPid(first.run);
      const key = readFileSync(join(dataDir(), 'local-executor', 'credentials.json'), 'utf8');
      first.run.child.kill('SIGTERM');
      expect(await first.run.done).toEqual({ code: 0, signal: null });
      expect(executorsOf(codexHome())).toEqual([executorPid]);

      process.kill(executorPid, 'SIGKILL');
      const second = await startHost();
      hosts.push(second.run);
      await second.run.waitFor('stderr', `local executor pid ${executorPid} is gone: starting a new one`);
      await second.run.waitFor('stderr', 'local executor started (pid ');
      await second.run.waitFor('stderr', `environment ${ENV} generation 1: connected`); // the same key is accepted
      const replacement = startedPid(second.run);
      expect(replacement).not.toBe(executorPid);
      expect(executorsOf(codexHome())).toEqual([replacement]);
      expect(readFileSync(join(dataDir(), 'local-executor', 'credentials.json'), 'utf8')).toBe(key);
      expect(JSON.parse(readFileSync(record(), 'utf8'))).toMatchObject({ pid: replacement, environmentId: ENV });
    } finally {
      await cleanUp(hosts);
    }
  });
});
