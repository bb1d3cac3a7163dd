/**
 * Issue 38: a take-back accounts for every process of the session. A host (HostedEnvironments on a real
 * disk log store and a shared state) serves a real direct-mode executor running three processes; the host
 * "dies" (closes without terminating anything) and a new one on the same stores takes the executor back
 * on its next socket. Its log store answers two things a real store can answer in a race: one process's
 * log is gone by the time it is taken back (`adopt` finds nothing), and one process shows up in the
 * listing only after the take-back read it. The first is `lost` with why, the second is counted as a
 * broken invariant and `lost` too; neither is left neither adopted nor lost, and their readers get an end.
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

describe('a take-back whose store cannot take a process back', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('marks it lost with why (never neither), and counts and ends one the take-back never saw', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-accounting-'));
    dirs.push(dataDir);
    const acceptor = trackForCleanup(await startAcceptor());
    const registry = trackForCleanup(await startRegistryStub({ acceptorUrl: () => acceptor.url }));
    const executor = await startDirectExecutor({ remoteUrl: registry.url, environmentId: ENV });
    const state = new MemoryStateStore();
    const sessions = { rememberedAt: (): undefined => undefined, record: (id: string, sessionId: string, epoch: number) => state.setSession(id, { sessionId, accessKeyId: 'AKIDEXAMPLE' }, epoch) };
    const storesOf = (logs: LogStore): EnvironmentStores => ({ logs, state, sessions, owner: 'host-spec', shared: true });

    // The first host: three processes that run until the executor stops.
    const firstLogs = await DiskLogStore.open({ dataDir });
    const first = new HostedEnvironments(OPTIONS, lines().logger, storesOf(firstLogs));
    first.adopt(ENV, await within(acceptor.nextAccepted(), 20_000, 'the first socket'));
    const connected = (table: HostedEnvironments): Promise<unknown> =>
      within(firstValueFrom(table.environments$.pipe(filter((list) => list.some((e) => e.id === ENV && e.state === 'connected')))), 20_000, 'connected');
    await connected(first);
    const backend = first.get(ENV)?.environment?.getExecBackend();
    if (backend === undefined) throw new Error('no environment');
    const started = await Promise.all(['kept', 'gone', 'late'].map((name) => backend.start({ argv: ['sh', '-c', `echo ${name}; sleep 120`], cwd: '/' })));
    const [kept, gone, late] = started.map((start) => start.process);
    if (kept === undefined || gone === undefined || late === undefined) throw new Error('a start failed');
    await Promise.all([kept, gone, late].map((process) => within(firstValueFrom(process.lines$('stdout')), 10_000, 'its first line')));
    await first.sessionRecorded(ENV);

    // The host stops as a host does: its logs closed first (their processes `unknown`), then its sockets and
    // managers; the processes stay with the executor.
    const redialled = acceptor.nextAccepted();
    await firstLogs.close();
    await first.close();

    const logs = await DiskLogStore.open({ dataDir });
    const said = lines();
    const second = new HostedEnvironments(OPTIONS, said.logger, storesOf(racing(logs, gone.processId, late.processId)));
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
});
