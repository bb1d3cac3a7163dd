/**
 * A replica back from a pause learns that another owns its environment from the first write the store
 * refuses: a lease renewal, or the state it publishes (whichever its clock and the table's changes make
 * first). Either is a stale write: fenced once, and counted in `exec_rx_host_stale_writes_total{store="state"}`
 * (`HostCluster.figures().staleStateWrites`). CI once saw the fencing spec's replica fenced by a refused
 * publish and the counter at 0; both paths are walked here, against a real redis-server, on virtual time.
 */
import { BehaviorSubject, Subject, VirtualTimeScheduler } from 'rxjs';
import type { Observable } from 'rxjs';
import { HostCluster } from '../../../src/host/cluster/host-cluster';
import type { ClusterTable } from '../../../src/host/cluster/cluster-options';
import type { HostedEnvironment } from '../../../src/host/hosted-environment';
import { SILENT_LOGGER } from '../../../src/host/host-logger';
import type { RedisStateStore } from '../../../src/store/redis/redis-state-store';
import { redisStateRig } from '../../store/redis/redis-rig';

const ENV = 'env-1';

/** A table of one connected environment at `epoch`, until fenced: `fenced` resolves then. */
function tableOf(epoch: number, changes: Observable<readonly HostedEnvironment[]>): { table: ClusterTable; fenced: Promise<void> } {
  let held = true;
  let said: () => void = () => undefined;
  const fenced = new Promise<void>((resolve) => (said = resolve));
  const view: HostedEnvironment = { id: ENV, generation: 1, state: 'connected', info: undefined, environment: undefined, error: undefined, errorCode: undefined };
  const table: ClusterTable = {
    environments$: changes,
    all: () => (held ? [view] : []),
    epochOf: (id) => (held && id === ENV ? epoch : 0),
    liveIds: () => (held ? [ENV] : []),
    fence: (id) => {
      if (!held || id !== ENV) return false;
      held = false;
      said();
      return true;
    },
    signedAtOf: () => undefined,
    sessionOf: () => undefined,
  };
  return { table, fenced };
}

describe('HostCluster: a stale write refused by the shared store', () => {
  const rig = redisStateRig('exec-rx-stale-counted');
  const clusters: HostCluster[] = [];
  afterEach(async () => {
    await Promise.all(clusters.splice(0).map((cluster) => cluster.stop()));
  });

  /** Replica a claimed ENV at an epoch, then replica b took it at a newer one: a's view is stale. */
  async function taken(): Promise<{ a: RedisStateStore; epoch: number }> {
    const a = await rig.open();
    const b = await rig.open();
    const epoch = await a.claim(ENV, 'host-a');
    expect(await b.claim(ENV, 'host-b')).toBeGreaterThan(epoch);
    return { a, epoch };
  }

  /** Replica a's cluster part; `warnings` holds what it warned of. */
  function replica(state: RedisStateStore, table: ClusterTable, scheduler: VirtualTimeScheduler): { cluster: HostCluster; warnings: string[] } {
    const warnings: string[] = [];
    const log = { ...SILENT_LOGGER, warn: (_fields: unknown, msg: string) => void warnings.push(msg) };
    const cluster = new HostCluster({ state, id: 'cluster' }, { table, owner: 'host-a', log, scheduler, registrations: () => [], keyIdOf: () => undefined });
    clusters.push(cluster);
    return { cluster, warnings };
  }

  it('counts a refused publish (the table changed first) and fences once', async () => {
    const { a, epoch } = await taken();
    const { table, fenced } = tableOf(epoch, new BehaviorSubject<readonly HostedEnvironment[]>([]));
    const { cluster, warnings } = replica(a, table, new VirtualTimeScheduler());
    cluster.start();
    await fenced;
    expect(warnings).toEqual([`environment ${ENV}: another replica owns it now (its state at epoch ${epoch} was refused)`]);
    expect(cluster.figures()).toMatchObject({ staleStateWrites: 1, fenced: 1 });
    expect(await a.owner(ENV)).toMatchObject({ owner: 'host-b' });
  });

  it('counts a refused renewal (the clock came first) and fences once', async () => {
    const { a, epoch } = await taken();
    const scheduler = new VirtualTimeScheduler(undefined, 3_000); // the first renewal, not the periodic ones after it
    const { table, fenced } = tableOf(epoch, new Subject<readonly HostedEnvironment[]>());
    const { cluster, warnings } = replica(a, table, scheduler);
    cluster.start();
    scheduler.flush();
    await fenced;
    expect(warnings).toEqual([`environment ${ENV}: another replica owns it now (its lease at epoch ${epoch} could not be renewed)`]);
    expect(cluster.figures()).toMatchObject({ staleStateWrites: 1, fenced: 1 });
  });
});
