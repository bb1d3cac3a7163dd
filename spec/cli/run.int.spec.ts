/**
 * `exec-rx run`, the built cli, as a user runs it: the embedded default (a real codex executor in direct
 * mode joined to the in-process host), `--stdio` and `--connect`.
 */
import { spawn } from 'node:child_process';
import { startListeningExecutor } from '../support/executor';
import { CLI_COMMAND, runCli, runShell, startCli } from './cli-process';

describe('exec-rx run', () => {
  it('streams stdout and stderr apart and exits with the command’s status', async () => {
    const result = await runCli(['run', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(result).toEqual({ code: 3, stdout: 'out\n', stderr: 'err\n' });
  });

  it('gives the command piped stdin and end-of-file after it', async () => {
    expect(await runCli(['run', '--', 'cat'], 'hi\n')).toEqual({ code: 0, stdout: 'hi\n', stderr: '' });
    const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('latin1');
    const counted = await runCli(['run', '--', 'sh', '-c', 'wc -c; exit 0'], binary.repeat(1000));
    expect(counted.stdout.trim()).toBe(String(Buffer.byteLength(binary.repeat(1000))));
  });

  it('forwards stdin as it arrives: b comes about two seconds after a', async () => {
    const run = startCli(['run', '--', 'sh', '-c', 'echo ready >&2; exec cat']);
    await run.waitFor('stderr', 'ready');
    // The delay is in the feeder, a child process writing the cli's stdin.
    const feeder = spawn('sh', ['-c', 'echo a; sleep 2; echo b'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const feederClosed = new Promise((resolve) => feeder.on('close', resolve));
    feeder.stdout.pipe(run.child.stdin);
    await run.waitFor('stdout', 'a\n');
    const aAt = Date.now();
    await run.waitFor('stdout', 'b\n');
    const bAt = Date.now();
    const [{ code }] = await Promise.all([run.done, feederClosed]);
    expect(code).toBe(0);
    expect(bAt - aAt).toBeGreaterThanOrEqual(1500);
    expect(run.stdout.map((c) => c.text).join('')).toBe('a\nb\n');
  });

  it('runs the acceptance pipeline as typed: (echo a; sleep 2; echo b) | exec-rx run -- cat', async () => {
    expect(await runShell(`(echo a; sleep 2; echo b) | ${CLI_COMMAND} run -- cat`)).toEqual({ code: 0, stdout: 'a\nb\n', stderr: '' });
  });

  it('reports a command that cannot start in one line and exits 127 (126 when not executable)', async () => {
    const missing = await runCli(['run', '--', 'no-such-program-exec-rx', 'arg']);
    expect(missing).toEqual({ code: 127, stdout: '', stderr: 'exec-rx: cannot start no-such-program-exec-rx: No such file or directory\n' });
    const directory = await runCli(['run', '--', '/tmp']);
    expect(directory).toEqual({ code: 126, stdout: '', stderr: 'exec-rx: cannot start /tmp: Permission denied\n' });
  });

  it('exits 128+n when the command is killed by a signal, and honours --cwd and --env', async () => {
    expect((await runCli(['run', '--', 'sh', '-c', 'kill -TERM $$'])).code).toBe(143);
    expect(await runCli(['run', '--cwd', '/usr', '--env', 'GREETING=hello there', '--', 'sh', '-c', 'echo "$GREETING from $(pwd)"'])).toEqual({ code: 0, stdout: 'hello there from /usr\n', stderr: '' });
  });

  it('ends the command and exits 141 when its reader goes away (a broken pipe), without a stack', async () => {
    expect(await runShell(`${CLI_COMMAND} run -- yes | head -c 4 >/dev/null; echo "\${PIPESTATUS[0]}"`)).toEqual({ code: 0, stdout: '141\n', stderr: '' });
  });

  it('gives the command a pty with --tty, end-of-file as Ctrl-D', async () => {
    const result = await runCli(['run', '--tty', '--', 'sh', '-c', 'test -t 0 && test -t 1 && cat'], 'typed\n');
    expect(result.code).toBe(0);
    expect(result.stdout.replace(/\r/g, '')).toBe('typed\ntyped\n');
  });

  it('runs on an executor spawned over stdio with --stdio', async () => {
    expect(await runCli(['run', '--stdio', '--', 'sh', '-c', 'cat; exit 7'], 'through stdio\n')).toEqual({ code: 7, stdout: 'through stdio\n', stderr: '' });
  });

  it('runs on a listening executor with --connect and a token from EXEC_RX_TOKEN, and says so when refused', async () => {
    const token = 'cli-spec-token-do-not-print';
    const executor = await startListeningExecutor({ wsAuthToken: token });
    const url = executor.url ?? '';
    const ok = await runCli(['run', '--connect', url, '--', 'sh', '-c', 'cat; echo remote'], 'in\n', { ...process.env, EXEC_RX_TOKEN: token });
    expect(ok).toEqual({ code: 0, stdout: 'in\nremote\n', stderr: '' });
    const refused = await runCli(['run', '--connect', url, '--token', 'wrong-token-do-not-print', '--', 'true']);
    expect(refused.code).toBe(255);
    expect(refused.stderr).toMatch(/^exec-rx: .*401/);
    expect(refused.stderr).not.toContain('do-not-print');
  });

  it('explains its usage on a bad command line (status 2)', async () => {
    const result = await runCli(['run', '--bogus', '--', 'true']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage:');
  });
});

