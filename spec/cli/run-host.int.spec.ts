/**
 * `exec-rx run --host`, the built cli, against a real host (operator API) with a real codex executor in
 * direct mode: output split and exact, exit codes (signalled ones through Ctrl-C to exec-rx), stdin
 * piped with end of input and streamed as it comes, the same output byte-exact through a proxy that cuts
 * the HTTP connection 3 times, and no token in anything the cli prints.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SseHost } from '../host/sse/sse-setup';
import { startSseHost } from '../host/sse/sse-setup';
import { startSseProxy } from '../support/sse-proxy';
import type { CliRun } from './cli-process';
import { CLI, runCli, runCliBytes, startCli } from './cli-process';
import type { PtyRun } from './pty-host';
import { startOnPty } from './pty-host';

const ENV = 'cli-run-host';

describe('exec-rx run --host', () => {
  let setup: SseHost;
  let work: string;
  /** Everything any cli printed in this file, checked for the token at the end. */
  const printed: string[] = [];
  const cliEnv = (): NodeJS.ProcessEnv => ({ ...process.env, EXEC_RX_TOKEN: setup.token, EXEC_RX_HOST: '' });
  const hostArgs = (origin = setup.origin): string[] => ['run', '--host', origin, '--environment', ENV];
  const run = async (args: readonly string[], stdin: string | Uint8Array = ''): Promise<{ code: number | null; stdout: string; stderr: string }> => {
    const result = await runCli([...hostArgs(), ...args], stdin, cliEnv());
    printed.push(result.stdout, result.stderr);
    return result;
  };
  const start = (args: readonly string[]): CliRun => startCli([...hostArgs(), ...args], cliEnv());
  const record = (cli: CliRun): void => void printed.push(...[...cli.stdout, ...cli.stderr].map((c) => c.text));

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-cli-run-host-'));
    setup = await startSseHost({ environmentId: ENV });
  });
  const ptyRuns: PtyRun[] = [];
  afterAll(async () => {
    await Promise.all(ptyRuns.map((pty) => pty.stop()));
    rmSync(work, { recursive: true, force: true });
  });

  it('splits stdout and stderr exactly and exits with the command’s status (0 and 3)', async () => {
    expect(await run(['--', 'sh', '-c', 'echo out; echo err >&2; echo more; exit 3'])).toEqual({ code: 3, stdout: 'out\nmore\n', stderr: 'err\n' });
    expect(await run(['--', 'sh', '-c', 'printf "no newline"'])).toEqual({ code: 0, stdout: 'no newline', stderr: '' });
  });

  it('honours --cwd and --env', async () => {
    expect(await run(['--cwd', '/usr', '--env', 'GREETING=hello there', '--', 'sh', '-c', 'echo "$GREETING from $(pwd)"'])).toEqual({ code: 0, stdout: 'hello there from /usr\n', stderr: '' });
  });

  it('gives the command piped stdin with end of input: wc -c counts every byte', async () => {
    const bytes = Buffer.from(Array.from({ length: 300 * 1024 }, (_, i) => (i * 7 + (i >> 8)) & 0xff));
    expect(await run(['--', 'wc', '-c'], bytes)).toEqual({ code: 0, stdout: `${bytes.byteLength}\n`, stderr: '' });
    expect(await run(['--', 'cat'], 'hi\n')).toEqual({ code: 0, stdout: 'hi\n', stderr: '' });
  });

  it('streams stdin as it comes: a line written 2 s after the first comes out about 2 s after it', async () => {
    const cli = start(['--', 'sh', '-c', 'echo ready >&2; exec cat']);
    await cli.waitFor('stderr', 'ready');
    cli.child.stdin.write('a\n');
    const aWrittenAt = Date.now();
    await cli.waitFor('stdout', 'a\n');
    const aArrivedAt = Date.now();
    // The feeder's deliberate gap.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, aWrittenAt + 2_000 - Date.now())));
    const bWrittenAt = Date.now();
    cli.child.stdin.end('b\n');
    await cli.waitFor('stdout', 'a\nb\n');
    const bArrivedAt = Date.now();
    const { code } = await cli.done;
    record(cli);
    expect(code).toBe(0);
    expect(aArrivedAt).toBeLessThan(bWrittenAt);
    expect(bArrivedAt - aArrivedAt).toBeGreaterThanOrEqual(1_500);
    expect(cli.stdout.map((c) => c.text).join('')).toBe('a\nb\n');
  });

  it('interrupts the command on Ctrl-C (exit 130) and terminates it on a second one when it ignores the first (137)', async () => {
    const interrupted = start(['--', 'sh', '-c', 'echo ready; exec sleep 30']);
    await interrupted.waitFor('stdout', 'ready\n');
    interrupted.child.kill('SIGINT');
    expect((await interrupted.done).code).toBe(130);
    record(interrupted);

    const stubborn = start(['--verbose', '--', 'sh', '-c', 'trap "" INT; echo ready; sleep 30; echo survived']);
    await stubborn.waitFor('stdout', 'ready\n');
    stubborn.child.kill('SIGINT');
    await stubborn.waitFor('stderr', 'SIGINT: interrupting the command');
    stubborn.child.kill('SIGINT');
    expect((await stubborn.done).code).toBe(137);
    record(stubborn);
    expect(stubborn.stdout.map((c) => c.text).join('')).toBe('ready\n');
  });

  it('exits 127 for a missing program and 126 for one that is not executable, in one line', async () => {
    expect(await run(['--', 'no-such-program-exec-rx', 'arg'])).toEqual({ code: 127, stdout: '', stderr: 'exec-rx: cannot start no-such-program-exec-rx: No such file or directory\n' });
    expect(await run(['--', '/tmp'])).toEqual({ code: 126, stdout: '', stderr: 'exec-rx: cannot start /tmp: Permission denied\n' });
    expect(await run(['--tty', '--', 'no-such-program-exec-rx'])).toEqual({ code: 127, stdout: '', stderr: 'exec-rx: cannot start no-such-program-exec-rx: No such file or directory\n' });
  });

  it('gives the command a pty with --tty: its stdin raw, end of input as Ctrl-D, its output on stdout', async () => {
    const result = await run(['--tty', '--', 'sh', '-c', 'test -t 0 && test -t 1 && cat'], 'typed\n');
    expect(result.code).toBe(0);
    expect(result.stdout.replace(/\r/g, '')).toBe('typed\ntyped\n');
  });

  it('with --tty on a terminal: the pty has its size and follows its resizes; keys go to it raw', async () => {
    const watcher = 'trap "stty size" WINCH; trap "exit 0" INT; stty size; echo ready; while :; do sleep 1 & wait $!; done';
    const pty = startOnPty(30, 120, [process.execPath, CLI, ...hostArgs(), '--tty', '--', 'sh', '-c', watcher], { EXEC_RX_TOKEN: setup.token, EXEC_RX_HOST: '' });
    ptyRuns.push(pty);
    const lines = (text: string): string => text.replace(/\r+\n/g, '\n');
    await pty.waitFor('ready');
    expect(lines(pty.output())).toMatch(/^30 120\nready/);
    const from = pty.output().length;
    pty.resize(40, 100);
    await pty.waitFor('40 100', from);
    // Ctrl-C as a key: raw to the command's pty, whose INT trap exits 0.
    pty.type('\x03');
    expect(await pty.done).toBe(0);
    printed.push(pty.output());
    // stty sets rows, then cols: a trap may run in between (40 120) or twice after both (40 100).
    expect(lines(pty.output())).toMatch(/^30 120\nready\n(?:40 1[02]0\n)?40 100\n(?:\^C\n?)?$/);
  });

  it('delivers the same output byte-exact through 3 cuts of its HTTP connection to the host', async () => {
    const proxy = await startSseProxy(Number(new URL(setup.origin).port));
    try {
      const sent = join(work, 'sent.bin');
      // 1 MiB of random bytes in 32 paced blocks (about 1.6 s), tee'd to a file to compare with.
      const script = `i=0; while [ $i -lt 32 ]; do head -c 32768 /dev/urandom; sleep 0.05; i=$((i+1)); done | tee '${sent}' | cat; echo done >&2`;
      // The event stream (binary: the bytes as they are, in 8 KiB frames) is over 1 MiB: the cuts fall well inside it.
      proxy.cutAt([120_000, 500_000, 900_000]);
      const result = await runCliBytes([...hostArgs(proxy.origin), '--', 'sh', '-c', script], '', cliEnv());
      printed.push(result.stderr);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: 'done\n' });
      expect(proxy.cuts).toBe(3);
      // Every cut closes its connection (a kept-alive one may carry more requests than its log entry
      // shows): at least 4 connections, and event streams resumed by seq after what had come.
      expect(proxy.log.length).toBeGreaterThanOrEqual(4);
      expect(proxy.log.filter((r) => r.path.endsWith('/events') && (r.after ?? 0) > 0).length).toBeGreaterThanOrEqual(2);
      const expected = readFileSync(sent);
      expect(expected.byteLength).toBe(1024 * 1024);
      expect(result.stdout.equals(expected)).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it('says a refused token in one line (exit 255), and a missing environment', async () => {
    const refused = await runCli([...hostArgs(), '--', 'true'], '', { ...cliEnv(), EXEC_RX_TOKEN: 'wrong-operator-token-do-not-print' });
    expect(refused).toEqual({ code: 255, stdout: '', stderr: `exec-rx: the host at ${setup.origin} refused the operator token (401): check EXEC_RX_TOKEN or --token-file\n` });
    const missing = await runCli(['run', '--host', setup.origin, '--environment', 'no-such-env', '--', 'true'], '', cliEnv());
    printed.push(missing.stdout, missing.stderr);
    expect(missing.code).toBe(255);
    expect(missing.stderr).toBe('exec-rx: no environment no-such-env (ENVIRONMENT_NOT_FOUND); exec-rx ls lists the environments\n');
  });

  it('never prints the operator token', () => {
    expect(printed.length).toBeGreaterThan(10);
    expect(printed.filter((text) => text.includes(setup.token))).toEqual([]);
  });
});
