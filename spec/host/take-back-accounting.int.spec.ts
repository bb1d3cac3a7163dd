/**
 * Issue 38: a take-back accounts for every process of the session. A host (HostedEnvironments on a real
 * disk log store and a shared state) serves a real direct-mode executor running three processes; the host
 * "dies" (closes without terminating anything) and a new one on the same stores takes the executor back
 * on its next socket. Its log store answers two things a real store can answer in a race: one process's
 * log is gone by the time it is taken back (`adopt` finds nothing), and one process shows up in the
 * listing only after the take-back read it. The first is `lost` with why, the second is counted as a
 * broken invariant and `lost` too; neither is left neither adopted nor lost, and their readers get an end.
 * And when the executor no longer has the session the host takes back, each of its processes is `lost`,
 * saying so, and counted in the take-back's line (the host claims only once `initialize` was answered, so
 * it learns which processes there are after the executor said the session is gone).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type WebSocket from 'ws';
import type { EnvironmentStores } from '../../src/host/hosted-environments';
import { HostedEnvironments } from '../../src/host/hosted-environments';
import { DiskLogStore } from '../../src/store/disk/disk-log-store';
import type { LogStore } from '../../src/store/log-store';
import { MemoryStateStore } from '../../src/store/memory/memory-state-store';
import type { ProcessKey, ProcessMeta } from '../../src/store/process-meta';
import { startAcceptor } from '../support/acceptor';
import { startDirectExecutor, trackForCleanup } from '../support/executor';
import { startRegistryStub } from '../support/registry-stub';
import { within } from './api/sse-reader';

const ENV = 'accounted-1';
const OPTIONS = { clientName: 'exec-rx-take-back-spec', initializeTimeoutMs: 10_000 };

/** The host's log lines, kept for the assertions. */
function lines(): { readonly logger: (line: string) => void; readonly said: string[] } {
  const said: string[] = [];
  return { logger: (line) => void said.push(line), said };
}

/**
 * The disk store, answering as it would in a race: `adopt` of `gone` finds no log (it went between the
 * listing and the take-back), and `late` is missing from the take-back's listing, listed from then on.
 */
function racing(store: LogStore, gone: string, late: string): LogStore {
  let listings = 0;
  return Object.assign(Object.create(store) as LogStore, {
    adoptable: async (environmentId: string): Promise<readonly ProcessMeta[]> => {
      const found = await store.adoptable(environmentId);
      listings += 1;
      return listings === 1 ? found.filter((meta) => meta.processId !== late) : found;
    },
    adopt: (key: ProcessKey, epoch: number): Promise<number | undefined> => (key.processId === gone ? Promise.resolve(undefined) : store.adopt(key, epoch)),
  });
}

/** A host's table on `state` and `logs`; `sessionOf` is the session id it records for the executor's. */
function storesOf(state: MemoryStateStore, logs: LogStore, sessionOf: (sessionId: string) => string = (sessionId) => sessionId): EnvironmentStores {
  const record = (id: string, sessionId: string, epoch: number): Promise<void> => state.setSession(id, { sessionId: sessionOf(sessionId), accessKeyId: 'AKIDEXAMPLE' }, epoch);
  return { logs, state, sessions: { rememberedAt: (): undefined => undefined, record }, owner: 'host-spec', shared: true };
}

const connected = (table: HostedEnvironments): Promise<unknown> =>
  within(firstValueFrom(table.environments$.pipe(filter((list) => list.some((e) => e.id === ENV && e.state === 'connected')))), 20_000, 'connected');

/**
 * A first host on a disk log store in `dataDir` serving a real executor that runs three processes (`names`),
 * which run until the executor stops; then the host stops as a host does: its logs closed first (their
 * processes `unknown`), then its sockets and managers; the processes stay with the executor. Resolves with
 * the processes, the executor's next socket, and the executor (the caller stops it).
 */
async function firstHostStopped(dataDir: string, state: MemoryStateStore, names: readonly string[], sessionOf?: (sessionId: string) => string) {
  const acceptor = trackForCleanup(await startAcceptor());
  const registry = trackForCleanup(await startRegistryStub({ acceptorUrl: () => acceptor.url }));
  const executor = await startDirectExecutor({ remoteUrl: registry.url, environmentId: ENV });
  const firstLogs = await DiskLogStore.open({ dataDir });
  const first = new HostedEnvironments(OPTIONS, lines().logger, storesOf(state, firstLogs, sessionOf));
  first.adopt(ENV, await within(acceptor.nextAccepted(), 20_000, 'the first socket'));
  await connected(first);
  const backend = first.get(ENV)?.environment?.getExecBackend();
  if (backend === undefined) throw new Error('no environment');
  const started = await Promise.all(names.map((name) => backend.start({ argv: ['sh', '-c', `echo ${name}; sleep 120`], cwd: '/' })));
  const processes = started.map((start) => start.process);
  await Promise.all(processes.map((process) => within(firstValueFrom(process.lines$('stdout')), 10_000, 'its first line')));
  await first.sessionRecorded(ENV);
  const redialled = acceptor.nextAccepted();
  await firstLogs.close();
  await first.close();
  return { processes, redialled, executor };
}

describe('a take-back whose store cannot take a process back', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const dataDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'exec-rx-accounting-'));
    dirs.push(dir);
    return dir;
  };

  it('marks it lost with why (never neither), and counts and ends one the take-back never saw', async () => {
    const dir = dataDir();
    const state = new MemoryStateStore();
    const { processes, redialled, executor } = await firstHostStopped(dir, state, ['kept', 'gone', 'late']);
    const [kept, gone, late] = processes;
    if (kept === undefined || gone === undefined || late === undefined) throw new Error('a start failed');

    const logs = await DiskLogStore.open({ dataDir: dir });
    const said = lines();
    const second = new HostedEnvironments(OPTIONS, said.logger, storesOf(state, racing(logs, gone.processId, late.processId)));
    second.adopt(ENV, await within<WebSocket>(redialled, 30_000, 'the executor back'));
    await connected(second);
    const sessionId = (await state.environment(ENV))?.sessionId ?? 'none';
    expect(said.said.filter((line) => line.includes('taken back'))).toEqual([`environment ${ENV}: session ${sessionId} taken back: 1 process adopted, 2 lost`]);
    expect(await logs.meta({ environmentId: ENV, processId: gone.processId })).toMatchObject({ state: 'lost', lostReason: 'its output log is gone (expired or removed) since it was listed' });
    expect(await logs.meta({ environmentId: ENV, processId: late.processId })).toMatchObject({ state: 'lost', lostReason: expect.stringMatching(/^the take-back at epoch \d+ could not account for it$/) as string });
    expect(said.said.filter((line) => line.includes('was neither adopted nor lost'))).toEqual([
      expect.stringMatching(new RegExp(`^environment ${ENV}: process ${late.processId} was neither adopted nor lost by the take-back at epoch \\d+$`)) as string,
    ]);
    expect(second.unaccountedTakeBacks).toBe(1);
    expect(second.get(ENV)?.environment?.getProcess(kept.processId)?.state).toBe('running');
    // Their readers get an end: the lost process's log takes no more appends and says why.
    const reader = await logs.openReader({ environmentId: ENV, processId: late.processId });
    if (reader === undefined || reader.pace !== 'own') throw new Error('no log of the late process');
    const read = await reader.read(0, 1 << 20);
    expect({ ended: read.ended, first: read.events[0] }).toMatchObject({ ended: true, first: { type: 'output', seq: 1 } });

    await second.close();
    await logs.close();
    await executor.stop();
  });

  it('of a session its executor no longer has: every process of it is lost with why, counted, none left neither', async () => {
    const dir = dataDir();
    const state = new MemoryStateStore();
    // The first host records a session the executor never had: the take-back finds it gone, as after 80 s away.
    const { processes, redialled, executor } = await firstHostStopped(dir, state, ['one', 'two'], () => 'session-long-gone');

    const logs = await DiskLogStore.open({ dataDir: dir });
    const said = lines();
    const second = new HostedEnvironments(OPTIONS, said.logger, storesOf(state, logs));
    second.adopt(ENV, await within<WebSocket>(redialled, 30_000, 'the executor back'));
    await connected(second);

    expect(said.said.filter((line) => line.includes('a new one was made'))).toEqual([`environment ${ENV}: session session-long-gone is gone, a new one was made: 0 processes adopted, 2 lost`]);
    for (const process of processes) {
      expect(await logs.meta({ environmentId: ENV, processId: process.processId })).toMatchObject({
        state: 'lost',
        lostReason: 'the executor no longer has session session-long-gone (its 80 s retention passed); the process was killed with it',
      });
    }
    expect(second.unaccountedTakeBacks).toBe(0);

    await second.close();
    await logs.close();
    await executor.stop();
  });
});
