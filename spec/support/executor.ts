/**
 * Real-executor helpers for integration specs. Every executor started here is stopped in an `afterAll`
 * that this module registers when it is imported, so import it at the top of the spec file (the leak
 * check that runs after every file then finds nothing left). `cleanup` takes servers, stubs and proxies too; they are
 * shut down newest first, so an executor stops before the acceptor it dialled closes.
 */
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import type { AwsCredentials, DirectSpawnOptions, ListenSpawnOptions, StdioSpawnOptions } from '../../src/executor/spawn-options';
import type { Disposable, ResourceTracker } from './resources';
import { trackExecutors } from './resources';

/** The tracker of this spec file; its `stopAll` runs in an `afterAll`. */
export const cleanup: ResourceTracker = trackExecutors();

/** Registers a server, stub, proxy or socket wrapper for the file's `afterAll` and returns it. */
export function trackForCleanup<T extends Disposable>(resource: T): T {
  return cleanup.track(resource);
}

/** Fake static credentials (the AWS documentation's example key id); never real secrets. */
export const TEST_AWS_CREDENTIALS: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'exec-rx-test-secret-not-real',
};

/** Starts `codex exec-server --listen ws://127.0.0.1:0` (optionally with a capability token). */
export async function startListeningExecutor(options: Omit<ListenSpawnOptions, 'mode'> = {}): Promise<SpawnedExecutor> {
  return cleanup.track(await spawnExecutor({ ...options, mode: 'listen' }));
}

/** Starts `codex exec-server --listen stdio`; talk to it through `stdin`/`stdout`. */
export async function startStdioExecutor(options: Omit<StdioSpawnOptions, 'mode'> = {}): Promise<SpawnedExecutor> {
  return cleanup.track(await spawnExecutor({ ...options, mode: 'stdio' }));
}

/** Options for {@link startDirectExecutor}: credentials default to {@link TEST_AWS_CREDENTIALS}. */
export type DirectExecutorOptions = Omit<DirectSpawnOptions, 'mode' | 'credentials'> & {
  readonly credentials?: AwsCredentials;
};

/** Starts a direct-transport executor that registers at `remoteUrl` (a registry stub) and dials the host. */
export async function startDirectExecutor(options: DirectExecutorOptions): Promise<SpawnedExecutor> {
  const credentials = options.credentials ?? TEST_AWS_CREDENTIALS;
  return cleanup.track(await spawnExecutor({ ...options, credentials, mode: 'direct' }));
}
