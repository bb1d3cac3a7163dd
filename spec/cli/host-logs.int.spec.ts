/**
 * Issue 24, structured logs and the audit trail: `exec-rx host`, the built cli, with stderr a pipe (so JSON
 * lines by default) and `--audit-log FILE`. A real executor joins; every act of the operator API is made
 * once (start, a stdin write, stdin end, interrupt, resize, terminate, a refused and a granted release);
 * an unsigned registration is refused; SIGTERM stops the host. Every stderr line parses as JSON with a
 * level, a time and a msg, the ids where they apply; the audit file (0600) has one line per act with the
 * token's name, never the token; no line anywhere carries the operator token, the executor secret or a
 * process's env value.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiClient, paths } from '../host/api/api-client';
import { startDirectExecutor } from '../support/executor';
import { hostChildren, stderrOf } from './host-child';

jest.setTimeout(90_000);

const KEY_ID = 'AKIDCLILOGS';
const SECRET = 'cli-logs-secret-do-not-print';
const TOKEN = 'cli-logs-operator-token-do-not-print';
const ENV_SECRET = 'cli-logs-process-env-do-not-print';
const ENV = 'logs-1';

/** One JSON log line, as the spec reads it. */
type LogLine = Readonly<Record<string, unknown>>;

/** Each line of `text` parsed as JSON (a line that is not JSON fails the spec). */
const jsonLines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LogLine);

describe('exec-rx host: JSON logs on stderr and an audit trail in its own file', () => {
  const hosts = hostChildren('cli-logs', { keyId: KEY_ID, secret: SECRET, token: 'unused-env-token-do-not-print' });

  it('logs each kind of line as JSON with its ids, audits each act by token name, and prints no secret', async () => {
    const tokensFile = join(hosts.work(), 'tokens');
    writeFileSync(tokensFile, `ci operate * ${TOKEN}\n`, { mode: 0o600 });
    const auditFile = join(hosts.work(), 'audit.log');
    const host = await hosts.start(['--operator-tokens-file', tokensFile, '--audit-log', auditFile]);
    const executor = await startDirectExecutor({ remoteUrl: host.base, environmentId: ENV, credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } });
    try {
      await host.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
      const api = new ApiClient(host.base, TOKEN);
      // A refused registration: unsigned.
      const unsigned = await fetch(`${host.base}/cloud/environment/${ENV}-x/direct/register`, { method: 'POST', body: '{}' });
      expect(unsigned.status).toBe(401);

      const piped = await api.post(paths.processes(ENV), { argv: ['sh', '-c', 'cat; sleep 30'], env: { SPEC_SECRET: ENV_SECRET }, pipeStdin: true });
      expect(piped.status).toBe(201);
      const pipedId = (piped.body as { id: string }).id;
      // Who started it: the token's name, in the answer and in the resource.
      expect(piped.body).toMatchObject({ startedBy: 'ci' });
      expect((await api.get(paths.process(ENV, pipedId))).body).toMatchObject({ startedBy: 'ci' });
      expect((await api.post(paths.stdin(ENV, pipedId), { writeId: 'w1', data: Buffer.from('hi\n').toString('base64') })).status).toBe(200);
      expect((await api.post(paths.stdinEnd(ENV, pipedId))).status).toBe(200);
      expect((await api.post(paths.interrupt(ENV, pipedId))).status).toBe(200);
      const tty = await api.post(paths.processes(ENV), { argv: ['sleep', '30'], tty: { rows: 24, cols: 80 } });
      expect(tty.status).toBe(201);
      const ttyId = (tty.body as { id: string }).id;
      expect((await api.post(`${paths.process(ENV, ttyId)}/resize`, { rows: 30, cols: 100 })).status).toBe(200);
      const events = await api.events(paths.events(ENV, ttyId));
      if (!('stream' in events)) throw new Error(`events refused: ${events.refused.text}`);
      expect((await api.delete(paths.process(ENV, ttyId))).status).toBe(409);
      expect((await api.post(paths.terminate(ENV, ttyId))).status).toBe(200);
      await events.stream.ended(30_000);
      expect((await api.delete(paths.process(ENV, ttyId))).status).toBe(204);
      await api.post(paths.terminate(ENV, pipedId));
    } finally {
      await executor.stop();
      if (host.run.child.exitCode === null) host.run.child.kill('SIGTERM');
      await host.run.done;
    }

    const stderr = stderrOf(host.run);
    const lines = jsonLines(stderr);
    for (const line of lines) {
      expect(typeof line['level']).toBe('string');
      expect(typeof line['time']).toBe('string');
      expect(typeof line['msg']).toBe('string');
    }
    const find = (text: string): LogLine | undefined => lines.find((line) => String(line['msg']).includes(text));
    expect(find(`environment ${ENV} generation 1: connected`)).toMatchObject({ level: 'info', environmentId: ENV, generation: 1, state: 'connected' });
    expect(find(`environment ${ENV} generation 1: starting`)).toMatchObject({ environmentId: ENV, generation: 1 });
    expect(find(`registration for ${ENV}: accepted`)).toMatchObject({ level: 'info', environmentId: ENV });
    expect(find(`registration for ${ENV}-x: refused (401`)).toMatchObject({ level: 'warn', environmentId: `${ENV}-x`, status: 401 });
    expect(find('SIGTERM: stopping')).toMatchObject({ level: 'info' });
    expect(find('stopped')).toMatchObject({ level: 'info' });
    // The trail went to its file, not to stderr.
    expect(lines.filter((line) => line['audit'] === true)).toEqual([]);

    expect(statSync(auditFile).mode & 0o777).toBe(0o600);
    const audit = jsonLines(readFileSync(auditFile, 'utf8'));
    const acts = audit.map((line) => `${String(line['act'])} ${String(line['status'])}`);
    // The last terminate's answer depends on whether the interrupt already ended the process.
    expect(acts.slice(0, 8)).toEqual(['start 201', 'stdin end 200', 'interrupt 200', 'start 201', 'resize 200', 'release 409', 'terminate 200', 'release 204']);
    expect(acts[8]).toMatch(/^terminate /);
    for (const line of audit) expect(line).toMatchObject({ audit: true, tokenName: 'ci', environmentId: ENV, processId: expect.any(String) as unknown, remoteAddress: expect.stringMatching(/127\.0\.0\.1/) as unknown, level: expect.any(String) as unknown });
    expect(audit[0]).toMatchObject({ act: 'start', argv: ['sh', '-c', 'cat; sleep 30'] });
    expect(audit[5]).toMatchObject({ act: 'release', status: 409, code: 'PROCESS_RUNNING', level: 'warn' });
    // A stdin write is at debug level: not in the trail at the default level.
    expect(audit.some((line) => line['act'] === 'stdin')).toBe(false);

    const written = [stderr, host.run.stdout.map((c) => c.text).join(''), readFileSync(auditFile, 'utf8')].join('\n');
    for (const secret of [TOKEN, KEY_ID, SECRET, ENV_SECRET, 'unused-env-token-do-not-print']) expect(written).not.toContain(secret);
    expect(written).not.toMatch(/Signature=/);
  });
});
