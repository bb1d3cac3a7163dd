/**
 * `exec-rx host`, the built cli: it prints the join command with placeholders, a real executor joins it
 * with the credentials filled in, SIGTERM stops it, and the secret never appears in its output. With no
 * operator token configured it makes one and shows it once, in the startup url; everything it writes
 * and every operator API answer is searched for that token, the local executor's throwaway
 * credentials and a process's env.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient, paths } from '../host/api/api-client';
import type { ApiResponse } from '../host/api/api-client';
import { startDirectExecutor } from '../support/executor';
import { getText, parseExposition } from '../support/prom-text';
import type { CliRun } from './cli-process';
import { runCli, startCli } from './cli-process';

const KEY_ID = 'AKIDCLIHOST';
/** The spec's $XDG_STATE_HOME (made before the tests, removed after them). */
let stateHome = '';
beforeAll(() => {
  stateHome = mkdtempSync(join(tmpdir(), 'exec-rx-cli-host-state-'));
});
afterAll(() => rmSync(stateHome, { recursive: true, force: true }));

const SECRET = 'cli-host-secret-do-not-print';
const OPERATOR_TOKEN = 'cli-host-operator-token-do-not-print';
const ENV_SECRET = 'cli-host-process-env-do-not-print';

/** The environment without any configured key or operator token. */
function bareEnv(): NodeJS.ProcessEnv {
  // The host's default data dir goes under $XDG_STATE_HOME: a temporary one, never the home directory.
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: stateHome };
  for (const name of ['EXEC_RX_ACCESS_KEY_ID', 'EXEC_RX_SECRET_ACCESS_KEY', 'EXEC_RX_CREDENTIALS_FILE', 'EXEC_RX_OPERATOR_TOKEN']) delete env[name];
  return env;
}

/** Everything the cli wrote so far. */
const writtenBy = (run: CliRun): string => [...run.stdout, ...run.stderr].map((c) => c.text).join('');

/** How often `needle` occurs in `haystack`. */
const occurrences = (haystack: string, needle: string): number => haystack.split(needle).length - 1;

/** Stops the cli (if it still runs) and waits for it; for `finally` blocks, so no child outlives a failing test. */
async function stopCli(run: CliRun): Promise<void> {
  if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM');
  await run.done;
}

describe('exec-rx host', () => {
  it('prints how to join, admits a signed executor, and stops on SIGTERM', async () => {
    const host = startCli(['host', '--port', '0'], { ...bareEnv(), EXEC_RX_ACCESS_KEY_ID: KEY_ID, EXEC_RX_SECRET_ACCESS_KEY: SECRET, EXEC_RX_OPERATOR_TOKEN: OPERATOR_TOKEN });
    try {
      await host.waitFor('stdout', '--environment-id <environment-id>\n');
      const stdout = host.stdout.map((c) => c.text).join('');
      // A configured operator token is never shown: the url carries none.
      expect(stdout.split('\n')[2]).toBe(`Process output is kept on disk in ${join(stateHome, 'exec-rx')}`);
      expect(stdout.replace(/^Process output is kept .*\n/m, '')).toMatch(/^exec-rx host listening on http:\/\/127\.0\.0\.1:\d+\nOperator API and page: http:\/\/127\.0\.0\.1:\d+\/\nAn executor joins with:\n {2}AWS_ACCESS_KEY_ID=<access-key-id> AWS_SECRET_ACCESS_KEY=<secret-access-key> codex exec-server --remote http:\/\/127\.0\.0\.1:\d+ --remote-transport direct --aws-sigv4 --aws-region us-east-1 --environment-id <environment-id>\n$/);
      const remoteUrl = /--remote (\S+)/.exec(stdout)?.[1] ?? '';

      const executor = await startDirectExecutor({ remoteUrl, environmentId: 'cli-host-1', credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
      await host.waitFor('stderr', 'environment cli-host-1 generation 1: connected');
      host.child.kill('SIGTERM');
      expect(await host.done).toEqual({ code: 0, signal: null });
      await executor.stop();

      const all = [...host.stdout, ...host.stderr].map((c) => c.text).join('');
      expect(all).toContain('accepting 1 access key(s) from environment');
      expect(all).toContain('accepting 1 operator token(s) from EXEC_RX_OPERATOR_TOKEN');
      expect(all).not.toContain(SECRET);
      expect(all).not.toContain(OPERATOR_TOKEN);
      expect(all).not.toMatch(/token=|Signature=/);
    } finally {
      await stopCli(host);
    }
  });

  it('with --metrics-port prints where Prometheus scrapes it, and serves the metrics there until it stops', async () => {
    const host = startCli(['host', '--port', '0', '--metrics-port', '0', '--data-dir', 'none'], { ...bareEnv(), EXEC_RX_ACCESS_KEY_ID: KEY_ID, EXEC_RX_SECRET_ACCESS_KEY: SECRET, EXEC_RX_OPERATOR_TOKEN: OPERATOR_TOKEN });
    try {
      await host.waitFor('stdout', '--environment-id <environment-id>\n');
      const stdout = host.stdout.map((c) => c.text).join('');
      const url = /^Prometheus metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)$/m.exec(stdout)?.[1] ?? '';
      const base = /^exec-rx host listening on (\S+)$/m.exec(stdout)?.[1] ?? '';
      expect(url).not.toBe('');
      expect(url.startsWith(base)).toBe(false);
      const scraped = await getText(url);
      expect(scraped.status).toBe(200);
      expect(parseExposition(scraped.text).types.get('exec_rx_host_environments')).toBe('gauge');
      expect((await getText(`${base}/healthz`)).status).toBe(200);
    } finally {
      await stopCli(host);
    }
  });

  it('refuses to start without accepted keys, saying where they go', async () => {
    const result = await runCli(['host'], '', bareEnv());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no accepted access keys: pass --credentials-file FILE');
  });

  it('shows the operator token it made exactly once, in the startup url, and writes it, the executor credentials and process env nowhere else', async () => {
    const host = startCli(['host', '--local-executor', '--port', '0'], bareEnv());
    try {
      await host.waitFor('stdout', '--environment-id <environment-id>\n');
      // stdout is a pipe, not a terminal: the url goes to a 0600 file in the data dir, stdout says where.
      const urlFile = join(stateHome, 'exec-rx', 'operator-url');
      expect(host.stdout.map((c) => c.text).join('')).toContain(`Operator API and page: in ${urlFile} (0600; it carries the token)\n`);
      expect(statSync(urlFile).mode & 0o777).toBe(0o600);
      const shown = /^(http:\/\/127\.0\.0\.1:\d+)\/#token=([A-Za-z0-9_-]{43})$/.exec(readFileSync(urlFile, 'utf8').trim());
      if (shown === null) throw new Error(`no operator url in ${urlFile}: ${writtenBy(host)}`);
      const [startupUrl, base = '', token = ''] = shown;
      const url = startupUrl;
      await host.waitFor('stderr', 'environment local generation 1: connected');
      const pid = /local executor started \(pid (\d+), environment local\)/.exec(writtenBy(host))?.[1];
      // The local executor's credentials live in its environment, and in its data dir's 0600 file: read them there.
      const executorEnv = readFileSync(`/proc/${pid ?? 'none'}/environ`, 'utf8').split('\0');
      const credential = (name: string): string => executorEnv.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1) ?? '';
      const keyId = credential('AWS_ACCESS_KEY_ID');
      const secret = credential('AWS_SECRET_ACCESS_KEY');
      expect(keyId).toMatch(/^EXECRXLOCAL[0-9A-F]{16}$/);
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const keyFile = join(stateHome, 'exec-rx', 'local-executor', 'credentials.json');
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(keyFile, 'utf8'))).toEqual({ version: 1, accessKeyId: keyId, secretAccessKey: secret });

      // Operator API calls with the token, good and bad, and what they answered.
      const api = new ApiClient(base, token);
      const answers: ApiResponse[] = [];
      const call = async (answer: Promise<ApiResponse>): Promise<ApiResponse> => {
        const response = await answer;
        answers.push(response);
        return response;
      };
      expect((await call(api.get(paths.environments))).text).toContain('"id":"local"');
      const started = await call(api.post(paths.processes('local'), { argv: ['sh', '-c', 'test -n "$SPEC_SECRET" && echo ok'], env: { SPEC_SECRET: ENV_SECRET } }));
      expect(started.status).toBe(201);
      const id = (started.body as { id: string }).id;
      const events = await api.events(paths.events('local', id));
      if (!('stream' in events)) throw new Error(`events refused: ${events.refused.text}`);
      expect((await events.stream.ended()).map((e) => e.event)).toEqual(expect.arrayContaining(['output', 'exited', 'closed']));
      // Its output is logged in the data dir under the default state home (checked once the host stopped and flushed).
      const processDir = join(stateHome, 'exec-rx', 'processes', 'local', id);
      const overview = await api.events(paths.overview);
      if (!('stream' in overview)) throw new Error(`overview refused: ${overview.refused.text}`);
      await overview.stream.next((e) => e.event === 'overview');
      await overview.stream.close();
      const failing = [
        await call(api.get(paths.environments, { token: `${token}x` })),
        await call(api.get(paths.environments, { token: null, headers: { authorization: token } })),
        await call(api.get(`${paths.environments}?token=${token}`, { token: null })),
        await call(api.post(paths.processes('local'), undefined, { body: `{"argv":["${token}"`, headers: { 'content-type': 'application/json' } })),
        await call(api.post(paths.processes('local'), { argv: [token, 5], env: { TOKEN: token } })),
        await call(api.post(paths.stdin('local', id), { writeId: token, data: '' })),
        await call(api.get(paths.environment('nope'))),
        await call(api.request('PUT', paths.host)),
      ];
      expect(failing.map((r) => r.status)).toEqual([401, 401, 401, 400, 400, 409, 404, 405]);
      await stopCli(host);
      expect(existsSync(processDir) && readdirSync(processDir).some((name) => name.endsWith('.seg'))).toBe(true);
      expect(await host.done).toEqual({ code: 0, signal: null });

      const written = writtenBy(host);
      const stderr = host.stderr.map((c) => c.text).join('');
      const received = [...answers.map((a) => `${JSON.stringify(a.headers)}\n${a.text}`), events.stream.raw(), overview.stream.raw()].join('\n');
      expect(written).toContain('no operator token configured: made one (shown once on stdout, kept only as a digest)');
      expect(occurrences(written, token)).toBe(0);
      expect(stderr).not.toContain(token);
      // stderr is a pipe: JSON lines, each with a level, a time and a msg.
      const lines = stderr.split('\n').filter((l) => l !== '').map((line) => JSON.parse(line) as { msg?: unknown; environmentId?: unknown });
      for (const line of lines) expect(line).toMatchObject({ level: expect.any(String) as unknown, time: expect.any(String) as unknown, msg: expect.any(String) as unknown });
      // A line about an environment names it as a field, the local executor's too.
      expect(lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('local executor')).map((line) => line.environmentId)).toEqual(['local', 'local']);
      expect(url).toBe(`${base}/#token=${token}`);
      for (const secretText of [token, keyId, secret, ENV_SECRET]) expect(received).not.toContain(secretText);
      for (const secretText of [keyId, secret, ENV_SECRET]) expect(written).not.toContain(secretText);
      expect(written).not.toMatch(/Signature=/);
    } finally {
      await stopCli(host);
      // With a data dir the local executor outlives its host: end it.
      await runCli(['host', '--stop-local-executor'], '', bareEnv());
    }
  });
});
