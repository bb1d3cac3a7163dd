/**
 * Issue 21: a host restart during 20 environments × 10 processes. The host (the built cli) is SIGKILLed
 * while every process runs and started again on the same data dir: every environment is taken back with
 * its 10 processes, and every process ends with its own output and exit code, read through the restarted
 * host.
 */
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { ApiClient, paths } from '../host/api/api-client';
import { finished } from '../host/api/api-host';
import { startDirectExecutor } from '../support/executor';
import type { HostChild } from './host-child';
import { hostChildren, stderrOf } from './host-child';

jest.setTimeout(240_000);

const KEY_ID = 'AKIDCLIMANY';
const SECRET = 'cli-many-secret-do-not-print';
const TOKEN = 'cli-many-operator-token-do-not-print';
const ENVIRONMENTS = 20;
const PROCESSES = 10;
const envId = (e: number): string => `many-${e}`;
/** Runs across the restart: it prints, waits, prints again and exits with a code of its own. */
const script = (e: number, p: number): string => `echo start-${e}-${p}; sleep 15; echo done-${e}-${p}; exit ${(e * PROCESSES + p) % 7}`;

/** Retries `request` while the operator API answers 429 (400 requests in a few seconds pass its 100/s per token), at most 20 times. */
async function unlimited<T>(request: () => Promise<T>, refused: (result: T) => boolean): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    const result = await request().catch((error: unknown) => {
      if (error instanceof Error && / answered 429/.test(error.message) && attempt < 20) return undefined;
      throw error;
    });
    if (result !== undefined && (!refused(result) || attempt >= 20)) return result;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

describe('exec-rx host restarted under 20 environments × 10 processes', () => {
  // 20 executors register and dial at about the same time: more handshakes than the default 10/s.
  const hosts = hostChildren('cli-many', { keyId: KEY_ID, secret: SECRET, token: TOKEN });
  const startHost = (): Promise<HostChild> => hosts.start(['--max-handshakes-per-second', '200']);

  it('takes every environment back with all its processes, and every process ends with its own output and code', async () => {
    const first = await startHost();
    const executors: SpawnedExecutor[] = [];
    let second: HostChild | undefined;
    try {
      for (let e = 0; e < ENVIRONMENTS; e += 1) {
        executors.push(await startDirectExecutor({ remoteUrl: first.base, environmentId: envId(e), credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET } }));
      }
      for (let e = 0; e < ENVIRONMENTS; e += 1) await first.run.waitFor('stderr', `environment ${envId(e)} generation 1: connected`);
      const api = new ApiClient(first.base, TOKEN);
      const ids: string[][] = [];
      for (let e = 0; e < ENVIRONMENTS; e += 1) {
        const started = await Promise.all(Array.from({ length: PROCESSES }, (_v, p) => unlimited(() => api.post(paths.processes(envId(e)), { argv: ['sh', '-c', script(e, p)] }), (answer) => answer.status === 429)));
        expect(started.map((answer) => answer.status)).toEqual(Array.from({ length: PROCESSES }, () => 201));
        ids.push(started.map((answer) => (answer.body as { id: string }).id));
      }
      first.run.child.kill('SIGKILL');
      await first.run.done;

      second = await startHost();
      for (let e = 0; e < ENVIRONMENTS; e += 1) await second.run.waitFor('stderr', `environment ${envId(e)} generation 1: connected`);
      const stderr = stderrOf(second.run);
      for (let e = 0; e < ENVIRONMENTS; e += 1) expect(stderr).toMatch(new RegExp(`environment ${envId(e)}: session \\S+ taken back: ${PROCESSES} processes adopted, 0 lost`));
      expect(executors.map((executor) => executor.child.exitCode)).toEqual(executors.map(() => null));

      const again = new ApiClient(second.base, TOKEN);
      for (let e = 0; e < ENVIRONMENTS; e += 1) {
        const results = await Promise.all((ids[e] ?? []).map((id) => unlimited(() => finished(again, envId(e), id, 60_000), () => false)));
        expect(results.map((r) => ({ stdout: r.stdout, exitCode: r.exitCode }))).toEqual(
          Array.from({ length: PROCESSES }, (_v, p) => ({ stdout: `start-${e}-${p}\ndone-${e}-${p}\n`, exitCode: (e * PROCESSES + p) % 7 })),
        );
      }
    } finally {
      if (second !== undefined) {
        second.run.child.kill('SIGTERM');
        await second.run.done;
      }
      first.run.child.kill('SIGKILL');
      await Promise.all(executors.map((executor) => executor.stop()));
    }
  });
});
