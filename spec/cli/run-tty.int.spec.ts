/**
 * `exec-rx run --tty` under a real terminal (a python3 pty host): the command's pty has the terminal's
 * size and follows it when exec-rx gets SIGWINCH, though the 0.171.0 executor has no resize.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, runCli } from './cli-process';
import type { PtyRun } from './pty-host';
import { startOnPty } from './pty-host';

/** Prints its size at start and on each SIGWINCH; exits 0 on Ctrl-C. */
const SIZE_WATCHER = 'trap "stty size" WINCH; trap "exit 0" INT; stty size; echo ready; while :; do sleep 1 & wait $!; done';

/** Terminal output as lines: the command's pty turns each newline into CR LF. */
const lines = (text: string): string => text.replace(/\r+\n/g, '\n');

describe('exec-rx run --tty on a terminal', () => {
  const runs: PtyRun[] = [];
  const scratch = mkdtempSync(join(tmpdir(), 'exec-rx-run-tty-spec-'));
  const onPty = (rows: number, cols: number, args: readonly string[], env: Readonly<Record<string, string>> = {}): PtyRun => {
    const run = startOnPty(rows, cols, [process.execPath, CLI, ...args], env);
    runs.push(run);
    return run;
  };
  afterAll(async () => {
    await Promise.all(runs.map((run) => run.stop()));
    rmSync(scratch, { recursive: true, force: true });
  });

  it('gives the command a 30x120 pty on a 30x120 terminal, follows each resize of it (SIGWINCH to exec-rx), and leaves no temp file', async () => {
    // The embedded executor's temp dir (where the pty's path is recorded) follows TMPDIR.
    const temp = join(scratch, 'tmp');
    mkdirSync(temp);
    const recorded = (): string[] => readdirSync(temp).filter((name) => name.startsWith('exec-rx-tty-'));
    const run = onPty(30, 120, ['run', '--tty', '--', 'sh', '-c', SIZE_WATCHER], { TMPDIR: temp });
    expect(lines(await run.waitFor('ready'))).toBe('30 120\nready\n');
    expect(recorded()).toHaveLength(1);
    let from = run.output().length;
    run.resize(40, 100);
    await run.waitFor('40 100', from);
    from = run.output().length;
    run.resize(25, 90);
    await run.waitFor('25 90', from);
    run.type('\x03');
    expect(await run.done).toBe(0);
    // stty sets rows, then cols: a trap may run in between (40 120, 25 100) or twice, never with a size
    // after the last. The command's pty echoes the Ctrl-C as ^C; the second SIGWINCH of the last resize
    // may still be pending then, and its trap prints the last size once more.
    expect(lines(run.output())).toMatch(/^30 120\nready\n(?:40 1[02]0\n)?40 100\n(?:25 (?:100|90)\n)?25 90\n(?:\^C\n?)?(?:25 90\n)?$/);
    expect(recorded()).toEqual([]);
  });

  it('passes the pty through as ssh -t does: each line ends CR LF once, and an end of input typed before exec-rx took the terminal ends the command\'s input (no ^@)', async () => {
    const run = onPty(30, 120, ['run', '--tty', '--', 'sh', '-c', 'stty size; cat; echo done']);
    // Typed at once, while the terminal is still canonical: its line discipline keeps the end-of-file mark
    // as a NUL and hands it to exec-rx once raw (script(1) does this when its own stdin ends).
    run.type('\x04');
    expect(await run.done).toBe(0);
    expect(run.output()).toBe('30 120\r\ndone\r\n');
  });

  it('exits 127 for a missing program with the same message as without a terminal (the start not sized)', async () => {
    const piped = await runCli(['run', '--tty', '--', 'no-such-program-exec-rx', 'arg']);
    const run = onPty(30, 120, ['run', '--tty', '--', 'no-such-program-exec-rx', 'arg']);
    expect(await run.done).toBe(127);
    expect(piped.code).toBe(127);
    expect(piped.stderr).toMatch(/^exec-rx: cannot start no-such-program-exec-rx: /);
    expect(lines(run.output())).toBe(piped.stderr);
  });

  it('says once that the terminal cannot be sized when the executor has no stty, and runs the command anyway', async () => {
    const bin = join(scratch, 'bin');
    mkdirSync(bin);
    for (const program of ['sh', 'echo']) symlinkSync(`/bin/${program}`, join(bin, program));
    const run = onPty(30, 120, ['run', '--tty', '--env', `PATH=${bin}`, '--', 'echo', 'ran']);
    expect(await run.done).toBe(0);
    expect(lines(run.output())).toBe("exec-rx: the terminal keeps the executor's default size and does not follow resizes: the executor has no stty or tty\nran\n");
  });
});
