/**
 * Issue 33, many environments on two replicas: 20 executors dial HAProxy at once-ish and 200 processes
 * run, ten per environment, each started on the replica that owns its environment. Every exit code and
 * every output is right, read from either replica. Registrations are never rate-limited into an exit:
 * the replicas' handshake limit is sized for the fleet as the README says (registration and upgrade per
 * executor, over the burst), and no executor exits.
 */
import { ApiClient, paths } from '../host/api/api-client';
import { within } from '../host/api/sse-reader';
import { outputOf } from '../cli/host-child';
import type { SpawnedExecutor } from '../../src/executor/spawn-executor';
import { startDirectExecutor } from '../support/executor';
import type { SpecHaproxy as Haproxy } from '../support/haproxy';
import { startHaproxy } from '../support/haproxy';
import type { Replica } from './replicas';
import { replicaCluster } from './replicas';

jest.setTimeout(300_000);

const CREDENTIALS = { keyId: 'AKIDREPLICAFLEET', secret: 'replica-fleet-secret-do-not-print', token: 'replica-fleet-token-do-not-print' };
const ENVIRONMENTS = 20;
const PER_ENVIRONMENT = 10;
/** Prints its environment and number, then exits with the number mod 7. */
const SCRIPT = 'echo "$0 $1 done"; exit $(($1 % 7))';

describe('two replicas, 20 environments, 200 processes', () => {
  const cluster = replicaCluster('replica-fleet', CREDENTIALS);
  let balancer: Haproxy | undefined;
  const executors: SpawnedExecutor[] = [];
  afterAll(async () => {
    await Promise.all(executors.map((executor) => executor.stop()));
    await balancer?.stop();
  });

  it('runs every process with its own exit code and output, and no executor is refused into an exit', async () => {
    // The fleet's limit: 2 handshakes per executor (registration, upgrade), 20 executors, spread over two replicas.
    const limits = ['--max-handshakes-per-second', '40', '--max-environments', '64'];
    const a = await cluster.start('a', limits);
    const b = await cluster.start('b', limits);
    balancer = await startHaproxy({ backends: [{ name: 'a', port: a.port }, { name: 'b', port: b.port }], healthPath: '/readyz' });
    const credentials = { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret };
    const ids = Array.from({ length: ENVIRONMENTS }, (_v, i) => `fleet-${String(i + 1).padStart(2, '0')}`);
    for (const id of ids) executors.push(await startDirectExecutor({ remoteUrl: balancer.url, environmentId: id, credentials }));
    const owners = new Map<string, Replica>();
    await Promise.all(
      ids.map(async (id) => {
        const line = `environment ${id} generation 1: connected`;
        owners.set(id, await within(Promise.race([a, b].map(async (replica) => (await replica.run.waitFor('stderr', line), replica))), 60_000, line));
      }),
    );
    // Both replicas serve some of the fleet.
    expect(new Set(owners.values()).size).toBe(2);

    const started: { id: string; n: number; processId: string }[] = [];
    await Promise.all(
      ids.map(async (id) => {
        const api = new ApiClient(owners.get(id)?.base ?? '', CREDENTIALS.token);
        for (let n = 1; n <= PER_ENVIRONMENT; n++) {
          const answer = await api.post(paths.processes(id), { argv: ['sh', '-c', SCRIPT, id, String(n)] });
          expect(answer.status).toBe(201);
          started.push({ id, n, processId: (answer.body as { id: string }).id });
        }
      }),
    );
    expect(started.length).toBe(ENVIRONMENTS * PER_ENVIRONMENT);

    // Each read from the replica that does not own it (the Redis log), ten at a time.
    for (let i = 0; i < started.length; i += 10) {
      await Promise.all(
        started.slice(i, i + 10).map(async ({ id, n, processId }) => {
          const reader = owners.get(id) === a ? b : a;
          const api = new ApiClient(reader.base, CREDENTIALS.token);
          const opened = await api.events(paths.events(id, processId));
          if (!('stream' in opened)) throw new Error(`events of ${id}/${processId} answered ${opened.refused.status}`);
          const got = outputOf(await opened.stream.ended(60_000));
          expect(got.text).toBe(`${id} ${n} done\n`);
          expect(got.others).toEqual(['exited', 'closed']);
          const resource = await api.get(paths.process(id, processId));
          expect(resource.body).toMatchObject({ state: 'closed', exitCode: n % 7 });
        }),
      );
    }
    for (const replica of [a, b]) expect(await cluster.metric(replica, 'exec_rx_host_registrations_total', { outcome: '429' })).toBe(0);
    for (const executor of executors) expect(executor.child.exitCode).toBeNull();
  });

  it('spreads executors joining one after another over both replicas (the balancer goes by open connections)', async () => {
    const a = await cluster.start('spread-a');
    const b = await cluster.start('spread-b');
    const spread = await startHaproxy({ backends: [{ name: 'a', port: a.port }, { name: 'b', port: b.port }], healthPath: '/readyz' });
    try {
      const credentials = { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret };
      const owned = new Map<Replica, number>([
        [a, 0],
        [b, 0],
      ]);
      for (let i = 1; i <= 6; i++) {
        const id = `spread-${i}`;
        executors.push(await startDirectExecutor({ remoteUrl: spread.url, environmentId: id, credentials }));
        // Each joins once the one before is connected: a registration, then its long-lived upgrade.
        const line = `environment ${id} generation 1: connected`;
        const owner = await within(Promise.race([a, b].map(async (replica) => (await replica.run.waitFor('stderr', line), replica))), 30_000, line);
        owned.set(owner, (owned.get(owner) ?? 0) + 1);
      }
      // Round robin put every upgrade on one replica (0 and 6): by open connections each gets its share.
      expect(Math.min(owned.get(a) ?? 0, owned.get(b) ?? 0)).toBeGreaterThanOrEqual(2);
    } finally {
      await spread.stop();
    }
  });
});
