/**
 * Issue 21, a host restart costs nothing, the graceful way (the sibling of host-adopt.int.spec.ts, which
 * SIGKILLs): `exec-rx host --data-dir` (the built cli) gets SIGTERM while its executor streams 10 MiB at
 * 256 KiB/s. It exits 0 within its shutdown timeout; a reader's stream ends with the come-back event
 * (`event: restart`, and `retry:`), nothing after it; what the host received is in its log. Started
 * again on the same data dir, it takes the executor back (its registration kept, adoption); the same
 * process goes on, and a reader resuming after its last seq gets the rest, sha256-exact.
 * Also: a second signal, or the timeout, cuts a stop short at once; SIGHUP reloads the operator tokens.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, paths } from '../host/api/api-client';
import { within } from '../host/api/sse-reader';
import { startDirectExecutor } from '../support/executor';
import type { CliRun } from './cli-process';
import { startCli } from './cli-process';
import type { HostChild } from './host-child';
import { hostChildren, outputOf, stderrOf } from './host-child';

jest.setTimeout(150_000);

const KEY_ID = 'AKIDCLIGRACEFUL';
const SECRET = 'cli-graceful-secret-do-not-print';
const TOKEN = 'cli-graceful-operator-token-do-not-print';
const ENV = 'graceful-1';
/** 160 chunks of 64 KiB, four a second: 10 MiB at 256 KiB/s, after a line with the shell's pid. */
const CHUNKS = 160;
const SCRIPT = `echo pid $$; i=0; while [ $i -lt ${CHUNKS} ]; do printf '%065535d\\n' $i; i=$((i+1)); sleep 0.25; done`;
/** The come-back frame, as the stopping host writes it (the default retryMs). */
const COME_BACK = 'retry: 1000\nevent: restart\ndata: {"retryMs":1000}\n\n';

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const expectedAfterPid = (): string => Array.from({ length: CHUNKS }, (_v, i) => `${String(i).padStart(65535, '0')}\n`).join('');


describe('exec-rx host stopped with SIGTERM and started again while its executor streams', () => {
  const hosts = hostChildren('cli-graceful', { keyId: KEY_ID, secret: SECRET, token: TOKEN });
  const startHost = (): Promise<HostChild> => hosts.start(['--shutdown-timeout', '20']);

  it('exits 0, ends the reader with the come-back event, keeps what it received, and takes the same process back', async () => {
    const first = await startHost();
    const executor = await startDirectExecutor({ remoteUrl: first.base, environmentId: ENV, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    let second: HostChild | undefined;
    try {
      await within(first.run.waitFor('stderr', `environment ${ENV} generation 1: connected`), 30_000, 'connected');
      const api = new ApiClient(first.base, TOKEN);
      const started = await api.post(paths.processes(ENV), { argv: ['sh', '-c', SCRIPT] });
      expect(started.status).toBe(201);
      const processId = (started.body as { id: string }).id;

      const opened = await api.events(paths.events(ENV, processId));
      if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}`);
      await opened.stream.next((event) => event.event === 'output' && Number(event.id ?? '0') >= 8, 30_000);
      const pid = Number(/^pid (\d+)\n/.exec(outputOf(opened.stream.events).text)?.[1]);
      expect(Number.isInteger(pid) && existsSync(`/proc/${pid}`)).toBe(true);

      first.run.child.kill('SIGTERM');
      expect(await within(first.run.done, 20_000, 'the host stopping')).toEqual({ code: 0, signal: null });
      const events = await opened.stream.ended(10_000);
      // The come-back event is the last, and nothing follows it (not even bytes).
      expect(events[events.length - 1]).toEqual({ id: undefined, event: 'restart', data: '{"retryMs":1000}', retry: '1000' });
      expect(opened.stream.raw().endsWith(COME_BACK)).toBe(true);
      const firstRead = outputOf(events);
      expect(firstRead.others).toEqual(['restart']);
      const stopped = stderrOf(first.run);
      expect(stopped).toContain('SIGTERM: stopping (within 20 s;');
      expect(stopped).toContain('stopping: 1 event stream(s) ended with the come-back event');
      expect(stopped).toMatch(/"msg":"stopped"\}\n$/);
      expect(existsSync(`/proc/${pid}`)).toBe(true); // the executor keeps it

      second = await startHost();
      expect(second.base).toBe(first.base);
      // What the first host received before it stopped is in the log: the new one serves the same seqs at once.
      const again = new ApiClient(second.base, TOKEN);
      const held = await again.events(`${paths.events(ENV, processId)}?after=0&follow=false`);
      if (!('stream' in held)) throw new Error(`events answered ${held.refused.status}: ${held.refused.text}`);
      const logged = outputOf(await held.stream.ended(30_000));
      const lastSeq = firstRead.seqs[firstRead.seqs.length - 1] ?? 0;
      expect(logged.seqs.length).toBeGreaterThanOrEqual(lastSeq);
      expect(logged.seqs.every((seq, index) => seq === index + 1)).toBe(true);
      expect(logged.text.startsWith(firstRead.text)).toBe(true);

      await within(second.run.waitFor('stderr', `environment ${ENV} generation 1: connected`), 30_000, 'adopted');
      expect(stderrOf(second.run)).toMatch(new RegExp(`environment ${ENV}: session \\S+ taken back: 1 process adopted, 0 lost`));
      expect(existsSync(`/proc/${pid}`)).toBe(true);

      const resumed = await again.events(paths.events(ENV, processId), { headers: { 'last-event-id': String(lastSeq) } });
      if (!('stream' in resumed)) throw new Error(`events answered ${resumed.refused.status}: ${resumed.refused.text}`);
      const restEvents = await resumed.stream.ended(120_000).catch((error: unknown) => {
        const got = outputOf(resumed.stream.events);
        throw new Error(`${String(error)}; resumed after ${lastSeq}, got seqs ${got.seqs[0] ?? '-'}..${got.seqs[got.seqs.length - 1] ?? '-'} and ${got.others.join(',')}; second host: ${stderrOf(second?.run ?? first.run)}`);
      });
      const rest = outputOf(restEvents);
      expect(rest.others).toEqual(['exited', 'closed']);
      const seqs = [...firstRead.seqs, ...rest.seqs];
      expect(seqs.every((seq, index) => seq === index + 1)).toBe(true);
      const all = firstRead.text + rest.text;
      expect({ bytes: all.length, sha256: sha256(all) }).toEqual({ bytes: `pid ${pid}\n`.length + CHUNKS * 65536, sha256: sha256(`pid ${pid}\n${expectedAfterPid()}`) });
      expect(JSON.parse(restEvents.find((event) => event.event === 'exited')?.data ?? '{}')).toMatchObject({ exitCode: 0 });

      second.run.child.kill('SIGTERM');
      expect(await within(second.run.done, 20_000, 'the second host stopping')).toEqual({ code: 0, signal: null });
      expect(`${stopped}${stderrOf(second.run)}`).not.toContain(SECRET);
      expect(`${stopped}${stderrOf(second.run)}`).not.toContain(TOKEN);
    } finally {
      second?.run.child.kill('SIGKILL');
      first.run.child.kill('SIGKILL');
      await executor.stop();
    }
  });
});

describe('exec-rx host: a stop cut short', () => {
  let work: string;
  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-cut-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  /**
   * A host whose stop cannot finish soon: its local executor is SIGSTOPped, so stopping it waits for the
   * SIGKILL grace (3 s). `--data-dir none`: only then does the local executor stop with its host.
   * Returns the host and the executor's pid (the spec SIGKILLs it).
   */
  async function hostWithStoppedExecutor(timeoutS: number): Promise<{ run: CliRun; pid: number }> {
    const env = { ...process.env, XDG_STATE_HOME: work, EXEC_RX_OPERATOR_TOKEN: TOKEN };
    const run = startCli(['host', '--port', '0', '--data-dir', 'none', '--local-executor', '--shutdown-timeout', String(timeoutS)], env);
    await within(run.waitFor('stderr', 'environment local generation 1: connected'), 30_000, 'local executor connected');
    const pid = Number(/local executor started \(pid (\d+)/.exec(stderrOf(run))?.[1]);
    expect(Number.isInteger(pid)).toBe(true);
    process.kill(pid, 'SIGSTOP');
    return { run, pid };
  }

  it.each([
    ['a second SIGTERM exits at once with 143', 30, 143, 'SIGTERM again: exiting now, without finishing stopping the local executor'],
    ['past --shutdown-timeout it exits with 1 and says what did not finish', 1, 1, 'shutdown timeout (1 s): did not finish stopping the local executor; exiting now'],
  ])('%s', async (_name, timeoutS, status, line) => {
    const { run, pid } = await hostWithStoppedExecutor(timeoutS);
    try {
      run.child.kill('SIGTERM');
      await within(run.waitFor('stderr', 'SIGTERM: stopping'), 10_000, 'stopping');
      if (status === 143) run.child.kill('SIGTERM');
      expect(await within(run.done, 2_500, 'the host exiting')).toEqual({ code: status, signal: null });
      expect(stderrOf(run)).toContain(line);
    } finally {
      run.child.kill('SIGKILL');
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
});

describe('exec-rx host: SIGHUP', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-hup-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('reloads the operator tokens file: the new token works, the old one is revoked (401, named in the log); a broken file keeps the set', async () => {
    const OLD = 'sighup-old-operator-token-0123456789';
    const NEW = 'sighup-new-operator-token-0123456789';
    const file = join(work, 'tokens');
    writeFileSync(file, `old operate * ${OLD}\n`, { mode: 0o600 });
    const env = { ...process.env, EXEC_RX_ACCESS_KEY_ID: KEY_ID, EXEC_RX_SECRET_ACCESS_KEY: SECRET };
    const run = startCli(['host', '--port', '0', '--data-dir', 'none', '--operator-tokens-file', file], env);
    try {
      await within(run.waitFor('stdout', '--environment-id <environment-id>\n'), 20_000, 'host listening');
      const base = /^exec-rx host listening on (\S+)$/m.exec(run.stdout.map((c) => c.text).join(''))?.[1] ?? '';
      const status = async (token: string): Promise<number> => (await new ApiClient(base, token).get('/api/v1/host')).status;
      expect(await status(OLD)).toBe(200);

      await within(run.waitFor('stderr', `accepting 1 operator token(s) from ${file}: old (operate)"}\n`), 10_000, 'the tokens named');
      writeFileSync(file, `# rotated\nnew view * ${NEW}\n`);
      run.child.kill('SIGHUP');
      await within(run.waitFor('stderr', `SIGHUP: reload: 1 operator token(s) from ${file}, revoked old (their event streams ended); 1 access key(s) from environment"}\n`), 10_000, 'reload');
      expect([await status(NEW), await status(OLD)]).toEqual([200, 401]);

      writeFileSync(file, `new view * too-short\n${NEW}\n`);
      run.child.kill('SIGHUP');
      await within(run.waitFor('stderr', `SIGHUP: reload: operator tokens kept (1): ${file}: line 1: the token must be 16 to 512 printable characters without spaces`), 10_000, 'failed reload');
      expect([await status(NEW), await status(OLD)]).toEqual([200, 401]);
      const stderr = stderrOf(run);
      for (const secret of [OLD, NEW, SECRET, 'too-short']) expect(stderr).not.toContain(secret);

      run.child.kill('SIGTERM');
      expect(await within(run.done, 20_000, 'the host stopping')).toEqual({ code: 0, signal: null });
    } finally {
      run.child.kill('SIGKILL');
    }
  });
});
