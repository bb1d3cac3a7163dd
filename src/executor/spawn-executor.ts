/**
 * Start the real `codex exec-server` binary as a child process: listening on a loopback WebSocket, on
 * stdio, or dialling a host through the direct remote transport. Used by `exec-rx run` and the int specs.
 * Facts this relies on (codex 0.171.0, measured):
 * - SIGTERM (listen, direct) or stdin EOF (stdio, direct) makes the executor kill the process group of every
 *   process it started and exit with status 0 within a few ms. In stdio mode SIGTERM alone is ignored.
 *   SIGKILL orphans those processes: they live in their own sessions.
 * - The native binary is spawned directly, never the `codex` npm wrapper (see `./codex-binary`).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { resolveCodexBinary } from './codex-binary';
import { LineRing } from './line-ring';
export { resolveCodexBinary } from './codex-binary';

/** Options shared by every mode. */
export interface SpawnCommonOptions {
  /** Arguments appended after the mode's own `exec-server` arguments. @default [] */
  readonly extraArgs?: readonly string[];
  /** Extra environment variables for the executor (applied over the sanitised inherited environment). */
  readonly env?: Readonly<Record<string, string>>;
  /** Path of the native binary. @default resolveCodexBinary() */
  readonly binary?: string;
  /** How long to wait for the executor to start (listen mode: for its URL line). @default 15000 */
  readonly startTimeoutMs?: number;
  /** How many recent stderr lines {@link SpawnedExecutor.stderrLines} keeps. @default 200 */
  readonly stderrLineLimit?: number;
}

/** `codex exec-server --listen ws://127.0.0.1:0`: a WebSocket server on a free loopback port. */
export interface ListenSpawnOptions extends SpawnCommonOptions {
  readonly mode: 'listen';
  /** Require `Authorization: Bearer <token>` on upgrades (`--ws-auth capability-token`). Written to a 0600 file. */
  readonly wsAuthToken?: string;
}

/** `codex exec-server --listen stdio`: newline-delimited JSON-RPC on the child's stdin/stdout. */
export interface StdioSpawnOptions extends SpawnCommonOptions {
  readonly mode: 'stdio';
}

/** Static AWS credentials for SigV4 signing, passed to the executor as `AWS_*` variables. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** `codex exec-server --remote URL --remote-transport direct --aws-sigv4`: registers, then dials the host. */
export interface DirectSpawnOptions extends SpawnCommonOptions {
  readonly mode: 'direct';
  /** Base URL of the environment registry (`http` only on loopback). */
  readonly remoteUrl: string;
  readonly environmentId: string;
  readonly credentials: AwsCredentials;
  /** SigV4 signing region. @default 'us-east-1' */
  readonly region?: string;
}
/** What {@link spawnExecutor} can start. */
export type SpawnExecutorOptions = ListenSpawnOptions | StdioSpawnOptions | DirectSpawnOptions;

/** How the executor process ended. SIGTERM ends it with `{ code: 0, signal: null }`. */
export interface ExecutorExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running executor. Call {@link SpawnedExecutor.stop} exactly when you are done; it is idempotent. */
export interface SpawnedExecutor {
  /** The executor's child process (the native binary itself). */
  readonly child: ChildProcess;
  readonly pid: number;
  /** Listen mode: the WebSocket URL the executor printed (`ws://127.0.0.1:PORT`). */
  readonly url?: string;
  /** Stdio mode: write JSON-RPC lines here. */
  readonly stdin?: Writable;
  /** Stdio mode: JSON-RPC lines from the executor. */
  readonly stdout?: Readable;
  /** The most recent stderr lines (bounded), for diagnostics. */
  stderrLines(): string[];
  /** Resolves when the process has exited, whoever ended it. Never rejects. */
  readonly exited: Promise<ExecutorExit>;
  /**
   * Ends stdin and sends SIGTERM (the executor kills the processes it started), then SIGKILL after `graceMs`
   * (which orphans them). Resolves once the child has exited, its pipes are closed, every listener and timer
   * is removed and the temp dir is gone.
   */
  stop(graceMs?: number): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 15_000;
const DEFAULT_STOP_GRACE_MS = 3_000;
const PIPE_CLOSE_GRACE_MS = 500;

/** The parent's environment minus anything that could carry credentials or change logging. */
function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || /^(AWS_|CODEX_)/i.test(name) || name === 'RUST_LOG') continue;
    env[name] = value;
  }
  return env;
}

/** Mode-specific arguments, environment and stdin. */
interface Plan { readonly args: string[]; readonly env: Record<string, string>; readonly stdin: 'pipe' | 'ignore' }

async function plan(options: SpawnExecutorOptions, tempDir: string): Promise<Plan> {
  switch (options.mode) {
    case 'listen': {
      const args = ['exec-server', '--listen', 'ws://127.0.0.1:0'];
      if (options.wsAuthToken !== undefined) {
        const tokenFile = join(tempDir, 'ws-token');
        await writeFile(tokenFile, options.wsAuthToken, { mode: 0o600, flag: 'wx' });
        args.push('--ws-auth', 'capability-token', '--ws-token-file', tokenFile);
      }
      return { args, env: {}, stdin: 'ignore' };
    }
    case 'stdio':
      return { args: ['exec-server', '--listen', 'stdio'], env: {}, stdin: 'pipe' };
    case 'direct': {
      const region = options.region ?? 'us-east-1';
      const { accessKeyId, secretAccessKey, sessionToken } = options.credentials;
      const env: Record<string, string> = { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: region };
      if (sessionToken !== undefined) env['AWS_SESSION_TOKEN'] = sessionToken;
      // --exit-on-stdin-close: if this process dies, the pipe closes and the executor exits with its processes.
      const args = ['exec-server', '--remote', options.remoteUrl, '--remote-transport', 'direct', '--aws-sigv4'];
      args.push('--aws-region', region, '--environment-id', options.environmentId, '--exit-on-stdin-close');
      return { args, env, stdin: 'pipe' };
    }
  }
}

/** Resolves when `child` has spawned (listen mode: printed its URL line); rejects on exit, error or timeout. */
function awaitStart(child: ChildProcess, listen: boolean, timeoutMs: number): Promise<string | undefined> {
  return new Promise<string | undefined>((resolve, reject) => {
    let stdoutText = '';
    const settle = (outcome: () => void): void => {
      clearTimeout(timer);
      child.off('spawn', onSpawn).off('error', onError).off('exit', onExit);
      child.stdout?.off('data', onData);
      outcome();
    };
    const onSpawn = (): void => {
      if (!listen) settle(() => resolve(undefined));
    };
    const onData = (chunk: string): void => {
      stdoutText += chunk;
      const newline = stdoutText.indexOf('\n');
      if (newline < 0) return;
      const url = stdoutText.slice(0, newline).trim();
      const bad = new Error(`executor printed ${JSON.stringify(url.slice(0, 200))} instead of its listen URL`);
      settle(() => (url.startsWith('ws://') ? resolve(url) : reject(bad)));
    };
    const onError = (error: Error): void => settle(() => reject(error));
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      settle(() => reject(new Error(`executor exited during startup (code ${String(code)}, signal ${String(signal)})`)));
    const late = (): void => settle(() => reject(new Error(`executor did not start within ${timeoutMs} ms`)));
    const timer = setTimeout(late, timeoutMs);
    child.on('spawn', onSpawn).on('error', onError).on('exit', onExit);
    if (listen) child.stdout?.on('data', onData);
  });
}

/** Owns one executor child: its listeners, its temp dir and its shutdown. */
class ExecutorProcess {
  readonly exited: Promise<ExecutorExit>;
  private readonly stderr: LineRing;
  private stopping: Promise<void> | undefined;
  private readonly ignore = (): void => undefined;

  constructor(
    readonly child: ChildProcess,
    private readonly tempDir: string,
    stderrLineLimit: number,
    stdioMode: boolean,
  ) {
    this.stderr = new LineRing(stderrLineLimit);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', this.stderr.push);
    if (!stdioMode) child.stdout?.setEncoding('utf8');
    // EPIPE on a write after the executor died, or a failed kill(), must not become an uncaught exception.
    child.stdin?.on('error', this.ignore);
    child.on('error', this.ignore);
    this.exited = new Promise<ExecutorExit>((resolve) => {
      if (child.pid === undefined) child.once('error', () => resolve({ code: null, signal: null }));
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  }

  /** Recent stderr lines. */
  stderrLines(): string[] {
    return this.stderr.snapshot();
  }

  /** Listen/direct mode: nobody reads stdout after startup, so drain it to keep the pipe from filling. */
  drainStdout(): void {
    this.child.stdout?.on('data', this.ignore);
  }

  /** Idempotent: every call returns the same shutdown. */
  stop(graceMs: number): Promise<void> {
    this.stopping ??= this.shutdown(graceMs);
    return this.stopping;
  }

  private async shutdown(graceMs: number): Promise<void> {
    const { child } = this;
    let killTimer: NodeJS.Timeout | undefined;
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      // Stdio mode ignores SIGTERM and exits on stdin EOF; direct mode (--exit-on-stdin-close) honours both.
      child.stdin?.end();
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    }
    await this.exited;
    clearTimeout(killTimer);
    await awaitPipesClosed(child);
    child.stderr?.off('data', this.stderr.push);
    child.stdout?.off('data', this.ignore);
    child.stdin?.off('error', this.ignore);
    child.off('error', this.ignore);
    await rm(this.tempDir, { recursive: true, force: true });
  }
}

/** After exit: waits for 'close' (every pipe done), destroying pipes that linger (a grandchild may hold one). */
function awaitPipesClosed(child: ChildProcess): Promise<void> {
  child.stdin?.destroy();
  const open = [child.stdout, child.stderr].some((pipe) => pipe !== null && !pipe.closed);
  if (!open || child.pid === undefined) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      child.off('close', done);
      resolve();
    };
    const timer = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, PIPE_CLOSE_GRACE_MS);
    child.on('close', done);
  });
}

/**
 * Starts `codex exec-server` with a fresh temporary CODEX_HOME (removed by `stop()`). Listen mode resolves
 * with the printed `url`; stdio mode with the child's `stdin`/`stdout`; direct mode once the process has
 * spawned (registration and dialling follow asynchronously; watch `exited` for a failed registration).
 * Rejects, after cleaning up, if the binary is missing or the executor dies or stalls during startup.
 */
export async function spawnExecutor(options: SpawnExecutorOptions): Promise<SpawnedExecutor> {
  const binary = options.binary ?? resolveCodexBinary();
  const tempDir = await mkdtemp(join(tmpdir(), 'exec-rx-executor-'));
  const codexHome = join(tempDir, 'codex-home');
  let executor: ExecutorProcess | undefined;
  try {
    await mkdir(codexHome);
    const { args, env, stdin } = await plan(options, tempDir);
    const child = spawn(binary, [...args, ...(options.extraArgs ?? [])], {
      env: { ...inheritedEnv(), ...options.env, ...env, CODEX_HOME: codexHome },
      stdio: [stdin, 'pipe', 'pipe'],
      // Its own process group for the executors that die with their stdin (direct: --exit-on-stdin-close;
      // stdio: EOF), so a terminal's Ctrl-C reaches the command through exec-rx, not the executor itself.
      detached: options.mode !== 'listen',
    });
    executor = new ExecutorProcess(child, tempDir, options.stderrLineLimit ?? 200, options.mode === 'stdio');
    const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const url = await awaitStart(child, options.mode === 'listen', timeoutMs);
    return expose(executor, options.mode, url);
  } catch (error) {
    const tail = executor?.stderrLines().slice(-5).join('\n') ?? '';
    await (executor?.stop(DEFAULT_STOP_GRACE_MS) ?? rm(tempDir, { recursive: true, force: true }));
    // Not `instanceof Error`: errors from node internals may come from another realm (jest sandboxes).
    const detail = typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
    const message = `failed to start codex exec-server (${binary}): ${detail}${tail === '' ? '' : `\n${tail}`}`;
    throw new Error(message, { cause: error });
  }
}

function expose(executor: ExecutorProcess, mode: SpawnExecutorOptions['mode'], url: string | undefined): SpawnedExecutor {
  const { child } = executor;
  if (child.pid === undefined) throw new Error('executor has no pid');
  const base = {
    child,
    pid: child.pid,
    exited: executor.exited,
    stderrLines: () => executor.stderrLines(),
    stop: (graceMs = DEFAULT_STOP_GRACE_MS) => executor.stop(graceMs),
  };
  if (mode !== 'stdio') executor.drainStdout();
  if (mode === 'listen' && url !== undefined) return { ...base, url };
  if (mode === 'stdio' && child.stdin !== null && child.stdout !== null) {
    return { ...base, stdin: child.stdin, stdout: child.stdout };
  }
  return base;
}
