/**
 * One real listen-mode executor and a manager connected to it for a whole `describe`: made in
 * `beforeAll`, closed (terminating what it started) in `afterAll`. Import `./executor` first in the spec
 * file (its leak checks), as every spec of a real executor does.
 */
import type { Environment, ExecBackend } from '../../src';
import { EnvironmentManager } from '../../src';
import { startListeningExecutor } from './executor';

/** What {@link useListeningEnvironment} gives: read its fields inside tests (they are set in `beforeAll`). */
export interface ListeningEnvironment {
  readonly manager: EnvironmentManager;
  readonly environment: Environment;
  readonly backend: ExecBackend;
}

/** Registers the `beforeAll`/`afterAll` of one executor and its manager (environment id `id`). */
export function useListeningEnvironment(id: string): ListeningEnvironment {
  let connected: ListeningEnvironment | undefined;
  const current = (): ListeningEnvironment => {
    if (connected === undefined) throw new Error('the listening environment is made in beforeAll: read it inside a test');
    return connected;
  };
  beforeAll(async () => {
    const executor = await startListeningExecutor();
    const manager = await EnvironmentManager.connect(id, executor.url ?? '', { clientName: 'exec-rx-spec' });
    const environment = manager.defaultEnvironment();
    if (environment === undefined) throw new Error('no default environment');
    connected = { manager, environment, backend: environment.getExecBackend() };
  });
  afterAll(async () => {
    await connected?.manager.close({ terminateProcesses: true });
  });
  return {
    get manager() {
      return current().manager;
    },
    get environment() {
      return current().environment;
    },
    get backend() {
      return current().backend;
    },
  };
}
