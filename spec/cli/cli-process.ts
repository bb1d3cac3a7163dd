/**
 * Runs the BUILT cli (`node dist/src/cli/main.js`, from `npm run build`) as a child process and records
 * its output with arrival times.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { ChildProcess, ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The built entry point. */
export const CLI = join(__dirname, '..', '..', 'dist', 'src', 'cli', 'main.js');

/** One chunk of output and when it arrived (ms since the cli started). */
export interface Chunk {
  readonly at: number;
  readonly text: string;
}

/** A running cli. */
export interface CliRun {
  readonly child: ChildProcessWithoutNullStreams;
  readonly stdout: Chunk[];
  readonly stderr: Chunk[];
  /** Resolves when the child exited and its pipes closed. */
  readonly done: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  /** Resolves when the concatenated stream contains `text` (or matches it), at or after character `from` (0: anywhere). */
  waitFor(stream: 'stdout' | 'stderr', text: string | RegExp, from?: number): Promise<void>;
}

const joined = (chunks: readonly Chunk[]): string => chunks.map((c) => c.text).join('');

/** Every cli this spec file started that has not exited: a failing spec must not leave one running. */
const running = new Set<ChildProcessWithoutNullStreams>();

afterAll(async () => {
  const left = [...running];
  for (const child of left) child.kill('SIGTERM');
  await Promise.all(
    left.map(
      (child) =>
        new Promise<void>((resolve) => {
          const kill = setTimeout(() => child.kill('SIGKILL'), 3_000);
          child.once('close', () => {
            clearTimeout(kill);
            resolve();
          });
          if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(kill);
            resolve();
          }
        }),
    ),
  );
});

/** Starts `node dist/src/cli/main.js ...args` with pipes on every stdio. */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = process.env): CliRun {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const started = Date.now();
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(child);
  child.once('close', () => running.delete(child));
  const output = { stdout: [] as Chunk[], stderr: [] as Chunk[] };
  const waiters: (() => void)[] = [];
  for (const name of ['stdout', 'stderr'] as const) {
    child[name].setEncoding('utf8');
    child[name].on('data', (text: string) => {
      output[name].push({ at: Date.now() - started, text });
      for (const waiter of waiters.splice(0)) waiter();
    });
  }
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const waitFor = (stream: 'stdout' | 'stderr', text: string | RegExp, from = 0): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const seen = joined(output[stream]).slice(from);
        if (typeof text === 'string' ? seen.includes(text) : text.test(seen)) return resolve();
        if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`cli ended without printing ${String(text)} on ${stream}: ${joined(output.stderr)}`));
        waiters.push(check);
      };
      check();
    });
  return { child, ...output, done, waitFor };
}

/** Runs the cli to completion with `stdin` as its whole input; resolves with its output and status. */
export async function runCli(args: readonly string[], stdin: string | Uint8Array = '', env?: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = startCli(args, env);
  run.child.stdin.end(stdin);
  const { code } = await run.done;
  return { code, stdout: joined(run.stdout), stderr: joined(run.stderr) };
}

/**
 * Runs the cli to completion with `stdin` as its whole input; resolves with its stdout as bytes (for
 * binary output), its stderr and status. `onStdout` hears the stdout byte count after each chunk.
 */
export function runCliBytes(
  args: readonly string[],
  stdin: string | Uint8Array = '',
  env: NodeJS.ProcessEnv = process.env,
  onStdout?: (bytes: number) => void,
): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(child);
  const stdout: Buffer[] = [];
  let stderr = '';
  let count = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    count += chunk.byteLength;
    onStdout?.(count);
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  child.stdin.end(stdin);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      running.delete(child);
      resolve({ code, stdout: Buffer.concat(stdout), stderr });
    }),
  );
}

/** Runs `script` with bash (for pipelines around the cli); resolves with its output and status. */
export function runShell(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `node dist/src/cli/main.js`, quoted for a shell script. */
export const CLI_COMMAND = `"${process.execPath}" "${CLI}"`;

/** What {@link readThrottled} has read so far. */
export interface ThrottledRead {
  /** The sha256 of every byte read, in order (call once, at the end). */
  digest(): string;
  /** Bytes read. */
  readonly received: number;
}

/**
 * Reads `stream` as a reader slower than its writer: it takes `perTick` bytes, then pauses the stream for
 * one tick of `tickMs` (that wait is the slow consumer being measured, not a wait for an event), hashing
 * what it reads; `onChunk` sees each chunk after it was counted.
 */
export function readThrottled(stream: NodeJS.ReadableStream, perTick: number, tickMs: number, onChunk: (chunk: Buffer) => void = () => undefined): ThrottledRead {
  const hash = createHash('sha256');
  let received = 0;
  let budget = perTick;
  stream.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    received += chunk.byteLength;
    budget -= chunk.byteLength;
    onChunk(chunk);
    if (budget > 0) return;
    stream.pause();
    setTimeout(() => {
      budget += perTick;
      stream.resume();
    }, tickMs);
  });
  return { digest: () => hash.digest('hex'), get received() { return received; } };
}

/** Kills `child` with SIGKILL when it still runs, and resolves once it closed (a spec's cleanup). */
export async function killIfRunning(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGKILL');
  await gone;
}
