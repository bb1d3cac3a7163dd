/**
 * HostedEnvironments after a restart, before any executor came back (virtual time): an environment
 * whose session the host's state remembered at its start is awaited until TAKE_BACK_WAIT_MS after the
 * start, and `takeBackSettled` emits when that wait runs out (or at once for one not awaited, or at close).
 */
import type { EnvironmentStores, SessionRecords } from '../../src/host/hosted-environments';
import { HostedEnvironments, TAKE_BACK_WAIT_MS } from '../../src/host/hosted-environments';
import { MemoryLogStore } from '../../src/store/memory/memory-log-store';
import { MemoryStateStore } from '../../src/store/memory/memory-state-store';
import { testScheduler } from '../support/marbles';

const sessions: SessionRecords = { rememberedAt: (id) => (id === 'remembered' ? 'session-1' : undefined), record: () => Promise.resolve() };
/** The stores of a host whose state remembered `remembered`'s session when it started (or nothing: a memory state). */
const stores = (remembering: SessionRecords = sessions): EnvironmentStores => ({ logs: new MemoryLogStore(), state: new MemoryStateStore(), sessions: remembering, owner: 'host-spec' });
const forgetful: SessionRecords = { rememberedAt: () => undefined, record: () => Promise.resolve() };

describe('HostedEnvironments: awaiting an executor back after a restart', () => {
  it('awaits an environment whose session it remembers until the wait runs out; none other', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable }) => {
      const environments = new HostedEnvironments({ clientName: 'spec', scheduler }, () => undefined, stores());
      expect({ remembered: environments.awaitingTakeBack('remembered'), other: environments.awaitingTakeBack('other') }).toEqual({ remembered: true, other: false });
      expectObservable(environments.takeBackSettled('remembered')).toBe(`${TAKE_BACK_WAIT_MS}ms (a|)`, { a: undefined });
      expectObservable(environments.takeBackSettled('other')).toBe('(a|)', { a: undefined });
    });
  });

  it('awaits nothing when its state remembered no session at the start (memory), nor once closed', async () => {
    const forgetting = new HostedEnvironments({ clientName: 'spec' }, () => undefined, stores(forgetful));
    expect(forgetting.awaitingTakeBack('remembered')).toBe(false);
    await forgetting.close();
    const environments = new HostedEnvironments({ clientName: 'spec' }, () => undefined, stores());
    const settled: string[] = [];
    environments.takeBackSettled('remembered').subscribe({ next: () => settled.push('next'), complete: () => settled.push('complete') });
    await environments.close();
    expect({ settled, awaiting: environments.awaitingTakeBack('remembered') }).toEqual({ settled: ['next', 'complete'], awaiting: false });
  });
});
