/**
 * The executor `exec-rx run` talks to: the embedded default (a codex executor in direct mode joined to an
 * in-process host on loopback, with throwaway credentials — the accepted-socket path), a listening
 * executor (`--connect`), or one spawned over stdio (`--stdio`).
 */
import { randomBytes } from 'node:crypto';
import type { Observable } from 'rxjs';
import { firstValueFrom, from, merge, NEVER, race, timer } from 'rxjs';
import { filter, map, mergeMap } from 'rxjs/operators';
import { ExecutorStartError } from '../../errors';
import type { Environment } from '../../environment/environment';
import { EnvironmentManager } from '../../environment/environment-manager';
import { resolveCodexBinary } from '../../executor/codex-binary';
import type { SpawnedExecutor } from '../../executor/spawn-executor';
import { spawnExecutor } from '../../executor/spawn-executor';
import type { HostServer } from '../../host/host-options';
import { startHostServer } from '../../host/host-server';
import type { RunTarget } from '../args';

/** An open connection to an executor. The caller calls `close()` exactly once when done. */
export interface OpenTarget {
  readonly environment: Environment;
  /** Whether the executor runs on this machine (then the command gets this process's environment). */
  readonly local: boolean;
  /** Emits once, with a message, if the executor process exits (embedded and stdio); never completes otherwise. */
  readonly executorExit$: Observable<string>;
  /** Stops the executor we started (its processes die with it) and closes the connection and host. */
  close(): Promise<void>;
}

const CLIENT_NAME = 'exec-rx';
const JOIN_TIMEOUT_MS = 20_000;
const EMBEDDED_ENVIRONMENT_ID = 'exec-rx-local';

/** The executors `run` talks to itself (a host's environment goes through `remote/remote-run` instead). */
export type ExecutorTarget = Exclude<RunTarget, { readonly kind: 'host' }>;

/** Opens `target`. Rejects with a user-facing Error (no stack needed) when the executor cannot be reached. */
export async function openTarget(target: ExecutorTarget, verboseLog: ((line: string) => void) | undefined): Promise<OpenTarget> {
  switch (target.kind) {
    case 'embedded':
      return openEmbedded(verboseLog);
    case 'stdio':
      return openStdio();
    case 'connect':
      return openConnect(target.url, target.token);
  }
}

const exitMessage$ = (executor: SpawnedExecutor): Observable<string> =>
  from(executor.exited).pipe(map(({ code, signal }) => `the executor exited (${signal === null ? `status ${String(code)}` : `signal ${signal}`})`));

/** Runs `close` steps in order, each even if an earlier one failed. */
async function closeAll(...steps: readonly (() => Promise<unknown>)[]): Promise<void> {
  for (const step of steps) await step().catch(() => undefined);
}

async function openEmbedded(verboseLog: ((line: string) => void) | undefined): Promise<OpenTarget> {
  resolveCodexBinary(); // throws the "how to get an executor" message when @openai/codex is missing
  const credentials = { accessKeyId: `EXECRX${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(32).toString('base64url') };
  const host = await startHostServer({
    credentials: new Map([[credentials.accessKeyId, credentials.secretAccessKey]]),
    ...(verboseLog === undefined ? {} : { log: (line: string) => verboseLog(`host: ${line}`) }),
  });
  let executor: SpawnedExecutor | undefined;
  try {
    executor = await spawnExecutor({ mode: 'direct', remoteUrl: host.url, environmentId: EMBEDDED_ENVIRONMENT_ID, credentials });
    const environment = await joined(host, executor);
    const stop = executor;
    return { environment, local: true, executorExit$: exitMessage$(stop), close: () => closeAll(() => host.close(), () => stop.stop()) };
  } catch (error: unknown) {
    const stop = executor;
    await closeAll(async () => stop?.stop(), () => host.close());
    throw error;
  }
}

/** The embedded environment once connected; rejects with `ExecutorStartError` if the executor exits or it takes too long. */
function joined(host: HostServer, executor: SpawnedExecutor): Promise<Environment> {
  const connected$ = host.environments$.pipe(
    map((list) => list.find((e) => e.id === EMBEDDED_ENVIRONMENT_ID && e.state === 'connected')?.environment),
    filter((environment): environment is Environment => environment !== undefined),
  );
  const failed$ = merge(
    exitMessage$(executor).pipe(map((message) => `${message} before joining${tail(executor)}`)),
    timer(JOIN_TIMEOUT_MS).pipe(map(() => `the executor did not join within ${JOIN_TIMEOUT_MS / 1000} s${tail(executor)}`)),
  ).pipe(mergeMap((message) => Promise.reject(new ExecutorStartError(message))));
  return firstValueFrom(race(connected$, failed$));
}

/** The executor's last error line (else its last line), for a failed start; the executor logs no credentials. */
const tail = (executor: SpawnedExecutor): string => {
  const lines = executor.stderrLines().map((line) => line.trim()).filter((line) => line !== '');
  const last = lines.filter((line) => /error/i.test(line)).slice(-1)[0] ?? lines.slice(-1)[0];
  return last === undefined ? '' : `: ${last.slice(0, 300)}`;
};

async function openStdio(): Promise<OpenTarget> {
  resolveCodexBinary();
  const executor = await spawnExecutor({ mode: 'stdio' });
  try {
    const manager = await EnvironmentManager.fromStdio('stdio', executor.child, { clientName: CLIENT_NAME });
    const environment = manager.defaultEnvironment();
    // Cannot happen (fromStdio registers its one environment before resolving; nothing removes it): a typed error would give a code to a failure that does not exist.
    if (environment === undefined) throw new Error('the stdio executor has no environment');
    return { environment, local: true, executorExit$: exitMessage$(executor), close: () => closeAll(() => manager.close(), () => executor.stop()) };
  } catch (error: unknown) {
    await executor.stop();
    throw error;
  }
}

async function openConnect(url: string, token: string | undefined): Promise<OpenTarget> {
  const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const manager = await EnvironmentManager.connect('remote', url, { clientName: CLIENT_NAME, headers });
  const environment = manager.defaultEnvironment();
  // Cannot happen (connect registers its one environment before resolving; nothing removes it): a typed error would give a code to a failure that does not exist.
  if (environment === undefined) throw new Error('the executor has no environment');
  return { environment, local: false, executorExit$: NEVER, close: () => manager.close() };
}
