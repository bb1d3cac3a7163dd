/**
 * The built `exec-rx host` (`dist/src/cli/main.js host`) as a child process of the bench, with its
 * default output log on disk (a data dir in the given work dir; `--log-total 1GiB` so the turns' logs do
 * not pile up), and a codex executor in direct mode joined to it: what `exec-rx run --host` runs against
 * in the paths suite. `close()` stops both; `stopEverything()` does too.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import { stopExecutor, trackChild, trackExecutor } from './executors';

/** The built command line's entry point. */
export const CLI = join(__dirname, '..', '..', 'src', 'cli', 'main.js');

/** The environment the host's executor joins as. */
export const CLI_HOST_ENV = 'bench-paths';

/** A running host child with its executor joined. */
export interface CliHost {
  /** The host's base url (`http://127.0.0.1:PORT`). */
  readonly url: string;
  /** An operator token it accepts. */
  readonly token: string;
  /** The host's pid, and its executor's. */
  readonly pid: number;
  readonly executorPid: number;
  close(): Promise<void>;
}

/** `process.env` less every `EXEC_RX_*` variable: what the bench's cli children start from. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('EXEC_RX_')));
}

/** Resolves once `read()` gives a value; rejects with `what` after 30 s or when `child` exits. */
async function until<T>(child: ChildProcess, read: () => T | undefined, what: string): Promise<T> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (child.exitCode !== null || performance.now() > deadline) throw new Error(`the bench host ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts the host on `<work>/data` (with `extraArgs`) and a direct executor, and resolves once the executor is connected. */
export async function startCliHost(work: string, extraArgs: readonly string[] = []): Promise<CliHost> {
  const credentials = { accessKeyId: 'BENCHPATHS', secretAccessKey: randomBytes(24).toString('base64url') };
  const token = randomBytes(24).toString('base64url');
  const env = { ...cleanEnv(), XDG_STATE_HOME: work, EXEC_RX_ACCESS_KEY_ID: credentials.accessKeyId, EXEC_RX_SECRET_ACCESS_KEY: credentials.secretAccessKey, EXEC_RX_OPERATOR_TOKEN: token };
  const child = trackChild(spawn(process.execPath, [CLI, 'host', '--port', '0', '--data-dir', join(work, 'data'), '--log-total', '1GiB', ...extraArgs], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  // Its log lines (one per run's start and end, the audit trail) are read and kept only until joined.
  let stderr = '';
  let joined = false;
  child.stdout?.setEncoding('utf8').on('data', (text: string) => void (stdout += text));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    if (!joined) stderr += text;
  });
  const stopHost = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    const url = await until(child, () => /^exec-rx host listening on (\S+)$/m.exec(stdout)?.[1], `did not listen: ${stdout}`);
    const executor = trackExecutor(await spawnExecutor({ mode: 'direct', remoteUrl: url, environmentId: CLI_HOST_ENV, credentials }));
    try {
      await until(child, () => (stderr.includes(`environment ${CLI_HOST_ENV} generation 1: connected`) ? true : undefined), `executor did not join: ${stderr.slice(-500)}`);
    } catch (error: unknown) {
      await stopExecutor(executor);
      throw error;
    }
    joined = true;
    stderr = '';
    return {
      url,
      token,
      pid: child.pid ?? 0,
      executorPid: executor.pid,
      close: async () => {
        await stopExecutor(executor);
        await stopHost();
      },
    };
  } catch (error: unknown) {
    await stopHost();
    throw error;
  }
}
