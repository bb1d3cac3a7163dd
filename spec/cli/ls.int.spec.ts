/**
 * `exec-rx ls`, the built cli, against a real host (operator API) with a real codex executor running two
 * processes, one closed and one running: the table, the `--json` document, and the errors (a refused
 * token, a host that cannot be reached). The token appears in nothing it prints.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { last } from 'rxjs/operators';
import type { SseHost } from '../host/sse/sse-setup';
import { startSseHost } from '../host/sse/sse-setup';
import { runCli } from './cli-process';

const ENV = 'cli-ls';

/** A loopback port nothing listens on (it did a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('exec-rx ls', () => {
  let setup: SseHost;
  let work: string;
  const printed: string[] = [];
  const ls = async (args: readonly string[], env: NodeJS.ProcessEnv = { ...process.env, EXEC_RX_TOKEN: setup.token, EXEC_RX_HOST: setup.origin }): Promise<{ code: number | null; stdout: string; stderr: string }> => {
    const result = await runCli(['ls', ...args], '', env);
    printed.push(result.stdout, result.stderr);
    return result;
  };
  const closedArgv = ['/bin/sh', '-c', 'echo one; exit 4'];
  let runningArgv: string[];
  let closedId: string;
  let runningId: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-ls-'));
    setup = await startSseHost({ environmentId: ENV });
    const closed = await setup.start(closedArgv, work);
    await firstValueFrom(closed.process.events$.pipe(last()));
    runningArgv = ['/bin/sh', '-c', `while [ ! -e '${join(work, 'go')}' ]; do sleep 0.05; done`];
    const running = await setup.start(runningArgv, work);
    closedId = closed.resource.id;
    runningId = running.resource.id;
  });
  afterAll(() => {
    writeFileSync(join(work, 'go'), '');
    rmSync(work, { recursive: true, force: true });
  });

  it('prints the environments and, indented under each, its processes', async () => {
    const result = await ls([]);
    // Quoted as a shell needs it: the script's own single quotes become '\''.
    const running = `/bin/sh -c 'while [ ! -e '\\''${join(work, 'go')}'\\'' ]; do sleep 0.05; done'`;
    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'ENVIRONMENT  GEN  STATE      PROCESSES',
        `${ENV}       1    connected  2`,
        `  ID${' '.repeat(34)}  STATE    EXIT  ARGV`,
        `  ${closedId}  closed   4     /bin/sh -c 'echo one; exit 4'`,
        `  ${runningId}  running  -     ${running}`,
        '',
      ].join('\n'),
    });
  });

  it('prints one JSON document with --json, of the documented shape', async () => {
    const result = await ls(['--json']);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    const document = JSON.parse(result.stdout) as { environments: { processes: object[] }[] };
    const process = (id: string, state: string, exitCode: number | null, argv: readonly string[]): object => ({ id, state, exitCode, argv, tty: false, pipeStdin: false, error: null });
    expect(document).toEqual({
      host: setup.origin,
      environments: [{ id: ENV, generation: 1, state: 'connected', error: null, processes: [process(closedId, 'closed', 4, closedArgv), process(runningId, 'running', null, runningArgv)] }],
    });
    // The fields, in their documented order.
    expect(Object.keys(document)).toEqual(['host', 'environments']);
    expect(Object.keys(document.environments[0] ?? {})).toEqual(['id', 'generation', 'state', 'error', 'processes']);
    expect(Object.keys(document.environments[0]?.processes[0] ?? {})).toEqual(['id', 'state', 'exitCode', 'argv', 'tty', 'pipeStdin', 'error']);
  });

  it('says a refused token or an unreachable host in one line and exits 1', async () => {
    const refused = await ls(['--host', setup.origin], { ...process.env, EXEC_RX_TOKEN: 'wrong-operator-token-do-not-print' });
    expect(refused).toEqual({ code: 1, stdout: '', stderr: `exec-rx: the host at ${setup.origin} refused the operator token (401): check EXEC_RX_TOKEN or --token-file\n` });
    const port = await closedPort();
    const unreachable = await ls(['--host', `http://127.0.0.1:${port}`], { ...process.env, EXEC_RX_TOKEN: setup.token });
    expect(unreachable).toEqual({ code: 1, stdout: '', stderr: `exec-rx: cannot reach the host at http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}\n` });
  });

  it('takes the token from --token-file', async () => {
    const file = join(work, 'token');
    writeFileSync(file, `${setup.token}\n`, { mode: 0o600 });
    const result = await ls(['--token-file', file, '--json'], { ...process.env, EXEC_RX_HOST: setup.origin, EXEC_RX_TOKEN: '' });
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { host: string }).host).toBe(setup.origin);
  });

  it('never prints the operator token', () => {
    expect(printed.length).toBeGreaterThan(6);
    expect(printed.filter((text) => text.includes(setup.token))).toEqual([]);
  });
});
