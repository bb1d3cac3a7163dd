/**
 * The built `exec-rx host` for the browser specs: `node dist/src/cli/main.js host` on a temporary data dir,
 * by default with `--local-executor` (a real codex executor) and the operator token the host makes, read
 * from the url it writes (`<data-dir>/operator-url`, since its stdout is a pipe): the url a person opens.
 * Stopping it (tracked, so after the file at the latest): SIGTERM, SIGKILL after a grace, then
 * `exec-rx host --stop-local-executor` for the executor it left running, then any executor of the data
 * dir still alive is killed, and the data dir removed.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliRun } from '../cli/cli-process';
import { runCli, startCli } from '../cli/cli-process';
import { trackForCleanup } from './executor';

/** A running host. */
export interface PageHost {
  /** `http://127.0.0.1:PORT`. */
  readonly base: string;
  /** The port it listens on. */
  readonly port: number;
  /** The url a person opens: `base/#token=…` (the made token's, or the first configured token's). */
  readonly url: string;
  /** The operator token in {@link url}. */
  readonly token: string;
  readonly dataDir: string;
  readonly run: CliRun;
  /** Everything it wrote so far. */
  output(): string;
  stop(): Promise<void>;
}

/** How to start it. */
export interface PageHostOptions {
  /** Start `--local-executor` (default true). */
  readonly localExecutor?: boolean;
  /** Extra flags. */
  readonly args?: readonly string[];
  /** Extra environment variables (access keys, …). */
  readonly env?: NodeJS.ProcessEnv;
  /** When the host is given tokens (a tokens file), the token the url carries; else the host makes one. */
  readonly token?: string;
}

const GRACE_MS = 10_000;

/** The live codex executors whose CODEX_HOME lies under `dir`. */
function executorsUnder(dir: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes('exec-server')) continue;
      if (readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').some((line) => line.startsWith(`CODEX_HOME=${dir}`))) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return found;
}

/** Starts the built host; resolves once it listens (and, with the local executor, once that is connected). */
export async function startPageHost(options: PageHostOptions = {}): Promise<PageHost> {
  const work = mkdtempSync(join(tmpdir(), 'exec-rx-browser-'));
  const dataDir = join(work, 'data');
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: work, ...options.env };
  for (const name of ['EXEC_RX_OPERATOR_TOKEN', 'EXEC_RX_CREDENTIALS_FILE']) if (options.env?.[name] === undefined) delete env[name];
  const local = options.localExecutor ?? true;
  const args = ['host', '--port', '0', '--data-dir', dataDir, ...(local ? ['--local-executor'] : []), ...(options.args ?? [])];
  const run = startCli(args, env);
  const output = (): string => [...run.stdout, ...run.stderr].map((c) => c.text).join('');
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (run.child.exitCode === null && run.child.signalCode === null) {
        run.child.kill('SIGTERM');
        const kill = setTimeout(() => run.child.kill('SIGKILL'), GRACE_MS);
        await run.done;
        clearTimeout(kill);
      }
      if (existsSync(join(dataDir, 'local-executor', 'executor.json'))) await runCli(['host', '--stop-local-executor', '--data-dir', dataDir], '', env);
      for (const pid of executorsUnder(work)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      rmSync(work, { recursive: true, force: true });
    })());
  trackForCleanup({ stop });
  try {
    await run.waitFor('stdout', '--environment-id <environment-id>\n');
    const stdout = run.stdout.map((c) => c.text).join('');
    const base = /^exec-rx host listening on (\S+)$/m.exec(stdout)?.[1];
    if (base === undefined) throw new Error(`the host printed no url: ${output()}`);
    let token = options.token;
    if (token === undefined) {
      const file = join(dataDir, 'operator-url');
      const shown = /^(http:\/\/127\.0\.0\.1:\d+)\/#token=(\S+)$/.exec(readFileSync(file, 'utf8').trim());
      if (shown === null) throw new Error(`no operator url in ${file}: ${output()}`);
      token = shown[2] ?? '';
    }
    if (local) await run.waitFor('stderr', 'environment local generation 1: connected');
    return { base, port: Number(new URL(base).port), url: `${base}/#token=${token}`, token, dataDir, run, output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
