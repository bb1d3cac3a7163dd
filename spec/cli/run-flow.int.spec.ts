/**
 * `exec-rx run` (direct, no host) honours `stdout.write()`'s answer: a reader that stalls holds the
 * connection paused until our stdout drains, so the cli's memory stays flat and every byte arrives.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI } from './cli-process';
import { yesDigest } from '../support/yes-digest';

const TOTAL = 200_000_000;
const STALL_MS = 10_000;
/** The growth allowed over the cli's idle RSS (it grew by ~240 MiB before it honoured `write()`). */
const ALLOWED_GROWTH_KB = 32 * 1024;

/** A `/proc/<pid>/status` field in kB (VmRSS: resident now; VmHWM: the peak so far). */
function memoryKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no ${field} for ${pid}`);
  return Number(match[1]);
}

/** Resolves with everything `child` wrote on the stream once it is done. */
function collect(stream: NodeJS.ReadableStream | null): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (part: string) => (text += part));
    stream?.on('end', () => resolve(text));
  });
}

/** Resolves once `text` appeared on `stream`. */
function waitForText(stream: NodeJS.ReadableStream | null, text: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    const onData = (part: Buffer | string): void => {
      seen += String(part);
      if (!seen.includes(text)) return;
      stream?.off('data', onData);
      resolve();
    };
    stream?.on('data', onData);
  });
}

const exited = (child: ChildProcess): Promise<number | null> => new Promise((resolve) => child.once('close', (code) => resolve(code)));

describe('exec-rx run flow control', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('holds the executor while a reader stalls 10 s: all 200 MB arrive exact, and the cli stays within 32 MiB of its idle RSS', async () => {
    // The reader reads nothing until the spec writes a line to its fd 3; then exactly TOTAL bytes.
    const reader = spawn('sh', ['-c', `read go <&3 && head -c ${TOTAL} | sha256sum`], { stdio: ['pipe', 'pipe', 'inherit', 'pipe'] });
    children.push(reader);
    const digest = collect(reader.stdout);
    const readerInput = reader.stdin;
    if (readerInput === null) throw new Error('the reader has no stdin pipe');
    // The command waits for a line before writing, and for another before exiting (so the cli is alive to be measured).
    const command = `echo ready >&2; read go; yes | head -c ${TOTAL}; read done`;
    const cli = spawn(process.execPath, [CLI, 'run', '--', 'sh', '-c', command], { stdio: ['pipe', readerInput, 'pipe'] });
    children.push(cli);
    // The cli has its own copy of the pipe: the reader sees end-of-file when the cli exits.
    readerInput.destroy();
    const cliExit = exited(cli);
    const { pid, stdin } = cli;
    if (pid === undefined || stdin === null) throw new Error('the cli did not start');
    await waitForText(cli.stderr, 'ready');
    const idleKb = memoryKb(pid, 'VmRSS');

    stdin.write('go\n');
    // The stall: the reader's pipe fills and stays full.
    const samples: number[] = [];
    const sampling = setInterval(() => samples.push(memoryKb(pid, 'VmRSS')), 250);
    await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    clearInterval(sampling);
    const stalledPeakKb = memoryKb(pid, 'VmHWM');

    const signal = reader.stdio[3];
    if (signal === null || signal === undefined || !('write' in signal)) throw new Error('no signal pipe to the reader');
    signal.write('go\n');
    expect((await digest).split(' ')[0]).toBe(yesDigest(TOTAL));
    // Everything was written and read: the cli's peak is final.
    const peakKb = memoryKb(pid, 'VmHWM');
    stdin.end('done\n');
    expect(await cliExit).toBe(0);

    process.stdout.write(`exec-rx RSS: idle ${idleKb} kB, stalled peak ${stalledPeakKb} kB, peak ${peakKb} kB, samples max ${Math.max(...samples)} kB\n`);
    expect(samples.length).toBeGreaterThan(10);
    expect(stalledPeakKb).toBeLessThanOrEqual(idleKb + ALLOWED_GROWTH_KB);
    expect(peakKb).toBeLessThanOrEqual(idleKb + ALLOWED_GROWTH_KB);
  });
});
