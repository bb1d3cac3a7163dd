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
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { ExecutorStartError } from '../errors';
import { resolveCodexBinary } from './codex-binary';
import type { ExecutorExit } from './executor-process';
import { ExecutorProcess } from './executor-process';
import { inheritedEnv, launchPlan } from './launch-plan';
import type { SpawnExecutorOptions } from './spawn-options';
export { resolveCodexBinary } from './codex-binary';

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

/** Resolves when `child` has spawned (listen mode: printed its URL line); rejects on exit, error or timeout (on `scheduler`). */
function awaitStart(child: ChildProcess, listen: boolean, timeoutMs: number, scheduler: SchedulerLike): Promise<string | undefined> {
  return new Promise<string | undefined>((resolve, reject) => {
    let stdoutText = '';
    const settle = (outcome: () => void): void => {
      timer.unsubscribe();
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
      const bad = new ExecutorStartError(`executor printed ${JSON.stringify(url.slice(0, 200))} instead of its listen URL`);
      settle(() => (url.startsWith('ws://') ? resolve(url) : reject(bad)));
    };
    const onError = (error: Error): void => settle(() => reject(error));
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void =>
      settle(() => reject(new ExecutorStartError(`executor exited during startup (code ${String(code)}, signal ${String(signal)})`)));
    const late = (): void => settle(() => reject(new ExecutorStartError(`executor did not start within ${timeoutMs} ms`)));
    const timer = scheduler.schedule(late, timeoutMs);
    child.on('spawn', onSpawn).on('error', onError).on('exit', onExit);
    if (listen) child.stdout?.on('data', onData);
  });
}

/**
 * Starts `codex exec-server` with a fresh temporary CODEX_HOME (removed by `stop()`). Listen mode resolves
 * with the printed `url`; stdio mode with the child's `stdin`/`stdout`; direct mode once the process has
 * spawned (registration and dialling follow asynchronously; watch `exited` for a failed registration).
 * Rejects with ExecutorStartError (`EXECUTOR_START_FAILED`), after cleaning up, if the binary is missing
 * or the executor dies or stalls during startup.
 */
export async function spawnExecutor(options: SpawnExecutorOptions): Promise<SpawnedExecutor> {
  const binary = options.binary ?? resolveCodexBinary();
  const scheduler = options.scheduler ?? asyncScheduler;
  const tempDir = await mkdtemp(join(tmpdir(), 'exec-rx-executor-'));
  const codexHome = join(tempDir, 'codex-home');
  let executor: ExecutorProcess | undefined;
  try {
    await mkdir(codexHome);
    const { args, env, stdin } = await launchPlan(options, tempDir);
    const child = spawn(binary, [...args, ...(options.extraArgs ?? [])], {
      env: { ...inheritedEnv(), ...options.env, ...env, CODEX_HOME: codexHome },
      stdio: [stdin, 'pipe', 'pipe'],
      // Its own process group for the executors that die with their stdin (direct: --exit-on-stdin-close;
      // stdio: EOF), so a terminal's Ctrl-C reaches the command through exec-rx, not the executor itself.
      detached: options.mode !== 'listen',
    });
    executor = new ExecutorProcess(child, tempDir, options.stderrLineLimit ?? 200, options.mode === 'stdio', scheduler);
    const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    const url = await awaitStart(child, options.mode === 'listen', timeoutMs, scheduler);
    return expose(executor, options.mode, url);
  } catch (error) {
    const tail = executor?.stderrLines().slice(-5).join('\n') ?? '';
    await (executor?.stop(DEFAULT_STOP_GRACE_MS) ?? rm(tempDir, { recursive: true, force: true }));
    // Not `instanceof Error`: errors from node internals may come from another realm (jest sandboxes).
    const detail = typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
    const message = `failed to start codex exec-server (${binary}): ${detail}${tail === '' ? '' : `\n${tail}`}`;
    throw new ExecutorStartError(message, { cause: error });
  }
}

function expose(executor: ExecutorProcess, mode: SpawnExecutorOptions['mode'], url: string | undefined): SpawnedExecutor {
  const { child } = executor;
  if (child.pid === undefined) throw new ExecutorStartError('executor has no pid');
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
