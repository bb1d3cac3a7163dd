/**
 * Issue 33, draining for deploys: SIGUSR2 to a replica makes `/readyz` answer 503 `draining` at once (the
 * balancer's check takes it out of the pool), then it lets its executors go: each re-dials the balancer,
 * lands on the other replica and is adopted with its processes. The drained replica exits 0 once none is
 * left, and no output is lost: a subscriber on the other replica reads each process's whole output,
 * contiguous and exact, and every exit code.
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

jest.setTimeout(180_000);

const CREDENTIALS = { keyId: 'AKIDREPLICADRAIN', secret: 'replica-drain-secret-do-not-print', token: 'replica-drain-token-do-not-print' };
const ENVS = ['drain-1', 'drain-2', 'drain-3'];
const LINES = 120;
/** 120 numbered lines, ten a second: the drain comes in the middle. */
const SCRIPT = `i=1; while [ $i -le ${LINES} ]; do echo "line $i of $0"; i=$((i+1)); sleep 0.1; done; exit 7`;
const expected = (name: string): string => Array.from({ length: LINES }, (_v, i) => `line ${i + 1} of ${name}\n`).join('');

describe('a replica drained with SIGUSR2', () => {
  const cluster = replicaCluster('replica-drain', CREDENTIALS);
  let balancer: Haproxy | undefined;
  const executors: SpawnedExecutor[] = [];
  afterAll(async () => {
    await Promise.all(executors.map((executor) => executor.stop()));
    await balancer?.stop();
  });

  it('reports not ready, lets every executor move to the other replica with its processes, loses no output, and exits 0', async () => {
    const a = await cluster.start('a');
    const b = await cluster.start('b');
    balancer = await startHaproxy({ backends: [{ name: 'a', port: a.port }, { name: 'b', port: b.port }], healthPath: '/readyz' });
    const credentials = { accessKeyId: CREDENTIALS.keyId, secretAccessKey: CREDENTIALS.secret };
    const owners = new Map<string, Replica>();
    for (const id of ENVS) {
      executors.push(await startDirectExecutor({ remoteUrl: balancer.url, environmentId: id, credentials }));
      const line = `environment ${id} generation 1: connected`;
      owners.set(id, await within(Promise.race([a, b].map(async (replica) => (await replica.run.waitFor('stderr', line), replica))), 30_000, line));
    }
    // Drain the replica holding the most executors (all of them, when one holds every one).
    const drained = ENVS.filter((id) => owners.get(id) === a).length >= 2 ? a : b;
    const stays = drained === a ? b : a;
    const moving = ENVS.filter((id) => owners.get(id) === drained);
    expect(moving.length).toBeGreaterThanOrEqual(2);

    const api = new ApiClient(stays.base, CREDENTIALS.token);
    const processes = new Map<string, string>();
    for (const id of ENVS) {
      const started = await new ApiClient(owners.get(id)?.base ?? '', CREDENTIALS.token).post(paths.processes(id), { argv: ['sh', '-c', SCRIPT, id] });
      expect(started.status).toBe(201);
      processes.set(id, (started.body as { id: string }).id);
    }
    const readers = await Promise.all(
      ENVS.map(async (id) => {
        const opened = await api.events(paths.events(id, processes.get(id) ?? ''));
        if (!('stream' in opened)) throw new Error(`events of ${id} answered ${opened.refused.status}`);
        return opened.stream;
      }),
    );
    await readers[0]?.next((event) => event.event === 'output' && Number(event.id ?? '0') >= 10, 30_000);

    drained.run.child.kill('SIGUSR2');
    await drained.run.waitFor('stderr', 'draining');
    const ready = await fetch(`${drained.base}/readyz`);
    expect({ status: ready.status, body: await ready.text() }).toMatchObject({ status: 503, body: expect.stringContaining('draining') });
    expect(await drained.run.done).toEqual({ code: 0, signal: null });
    for (const id of moving) {
      await stays.run.waitFor('stderr', `environment ${id}: session `);
      expect(cluster.stderr(stays)).toMatch(new RegExp(`environment ${id}: session \\S+ taken back: 1 process adopted, 0 lost`));
    }

    const ended = await Promise.all(readers.map((reader) => reader.ended(120_000)));
    ENVS.forEach((id, index) => {
      const got = outputOf(ended[index] ?? []);
      expect(got.others).toEqual(['exited', 'closed']);
      expect(got.seqs.every((seq, n) => seq === n + 1)).toBe(true);
      expect(got.text).toBe(expected(id));
    });
    for (const id of ENVS) {
      const done = await api.get(paths.process(id, processes.get(id) ?? ''));
      expect(done.body).toMatchObject({ state: 'closed', exitCode: 7 });
    }
    for (const executor of executors) expect(executor.child.exitCode).toBeNull();
  });
});
