/**
 * HostedEnvironments after a restart, before any executor came back (virtual time): an environment
 * whose session the host's state remembers is awaited until TAKE_BACK_WAIT_MS after the start, and
 * `takeBackSettled` emits when that wait runs out (or at once for one not awaited, or at close).
 */
import type { SessionRecords } from '../../src/host/hosted-environments';
import { HostedEnvironments, TAKE_BACK_WAIT_MS } from '../../src/host/hosted-environments';
import type { OutputLogStore } from '../../src/host/log/output-log-store';
import { testScheduler } from '../support/marbles';

const sessions: SessionRecords = { sessionOf: (id) => (id === 'remembered' ? 'session-1' : undefined), record: () => Promise.resolve() };
/** The store is only asked whether there is one (a host with a data dir) until an executor comes back. */
const store = {} as unknown as OutputLogStore;

describe('HostedEnvironments: awaiting an executor back after a restart', () => {
  it('awaits an environment whose session it remembers until the wait runs out; none other', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable }) => {
      const environments = new HostedEnvironments({ clientName: 'spec', scheduler }, () => undefined, store, sessions);
      expect({ remembered: environments.awaitingTakeBack('remembered'), other: environments.awaitingTakeBack('other') }).toEqual({ remembered: true, other: false });
      expectObservable(environments.takeBackSettled('remembered')).toBe(`${TAKE_BACK_WAIT_MS}ms (a|)`, { a: undefined });
      expectObservable(environments.takeBackSettled('other')).toBe('(a|)', { a: undefined });
    });
  });

  it('awaits nothing without a data dir, nor once closed', async () => {
    expect(new HostedEnvironments({ clientName: 'spec' }, () => undefined, undefined, sessions).awaitingTakeBack('remembered')).toBe(false);
    const environments = new HostedEnvironments({ clientName: 'spec' }, () => undefined, store, sessions);
    const settled: string[] = [];
    environments.takeBackSettled('remembered').subscribe({ next: () => settled.push('next'), complete: () => settled.push('complete') });
    await environments.close();
    expect({ settled, awaiting: environments.awaitingTakeBack('remembered') }).toEqual({ settled: ['next', 'complete'], awaiting: false });
  });
});
