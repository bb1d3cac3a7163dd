/**
 * `Environment.status$` and `info$` in virtual time: polled on the scheduler only while subscribed,
 * one poll shared by every subscriber, changes only, errors as values.
 */
import { map } from 'rxjs/operators';
import { Environment } from '../../src/environment/environment';
import { AcceptedSockets } from '../../src/session/accepted-sockets';
import { ExecClient } from '../../src/session/exec-client';
import { FakeSocketPort } from '../support/fake-socket-port';
import { testScheduler } from '../support/marbles';
import type { TestScheduler } from 'rxjs/testing';

const INFO = { shell: { name: 'bash', path: '/bin/bash' }, executorVersion: '0.171.0', cwd: 'file:///work' };

/** An executor that answers initialize, environment/status and environment/info at once, recording what it was asked (with the time). */
function executor(scheduler: TestScheduler, asked: string[]): FakeSocketPort {
  return new FakeSocketPort((frame, peer) => {
    const method = String(frame['method']);
    if (method === 'initialized') return;
    asked.push(`${scheduler.now()} ${method}`);
    const result = method === 'initialize' ? { sessionId: 'session-1' } : method === 'environment/status' ? { status: 'ready' } : INFO;
    peer.deliver({ id: frame['id'], result });
  });
}

function environmentOn(scheduler: TestScheduler, port: FakeSocketPort): { environment: Environment; client: ExecClient } {
  const accepted = new AcceptedSockets(port);
  const client = new ExecClient(accepted.sockets$, { clientName: 'host', reconnectable: true, recoveryDeadlineMs: 60_000, scheduler, rpc: { scheduler } });
  accepted.watch(client);
  void client.start().catch(() => undefined);
  const environment = new Environment('env-1', client, { streamOptions: () => ({ scheduler }), processes: {}, polls: { statusPollMs: 5_000, infoPollMs: 60_000 }, scheduler });
  return { environment, client };
}

describe('Environment.status$ (marbles)', () => {
  it('shares one poll between subscribers, replays the latest to a late one, and polls only while subscribed', () => {
    const scheduler = testScheduler();
    const asked: string[] = [];
    scheduler.run(({ expectObservable, cold, flush }) => {
      const { environment, client } = environmentOn(scheduler, executor(scheduler, asked));
      const status$ = environment.status$.pipe(map((s) => s.status));
      expectObservable(status$, '^ 12s !').toBe('r', { r: 'ready' });
      expectObservable(status$, '2s ^ 5s !').toBe('2s r', { r: 'ready' });
      cold('30s x').subscribe(() => client.close());
      flush();
    });
    // Initialize at 0, then one status request per tick while anyone listened: 0, 5 s, 10 s.
    expect(asked).toEqual(['0 initialize', '0 environment/status', '5000 environment/status', '10000 environment/status']);
  });

  it('says disconnected at once when the connection drops (no request), and ready again once resumed', () => {
    const scheduler = testScheduler();
    const asked: string[] = [];
    scheduler.run(({ expectObservable, cold }) => {
      const first = executor(scheduler, asked);
      const accepted = new AcceptedSockets(first);
      const client = new ExecClient(accepted.sockets$, { clientName: 'host', reconnectable: true, recoveryDeadlineMs: 60_000, scheduler, rpc: { scheduler } });
      accepted.watch(client);
      void client.start();
      const environment = new Environment('env-1', client, { streamOptions: () => ({}), processes: {}, polls: { statusPollMs: 5_000 }, scheduler });
      cold('6s x').subscribe(() => first.drop('executor vanished'));
      cold('8s x').subscribe(() => accepted.replace(client, executor(scheduler, asked)));
      cold('20s x').subscribe(() => client.close('done'));
      const described$ = environment.status$.pipe(map((s) => ('error' in s ? `${s.status} ${s.error.code}` : s.status)));
      expectObservable(described$).toBe('r 5999ms d 1999ms r 11999ms (c|)', { r: 'ready', d: 'disconnected ENVIRONMENT_RECOVERING', c: 'disconnected CLOSED' });
    });
    expect(asked.filter((line) => line.endsWith('environment/status'))).toEqual(['0 environment/status', '5000 environment/status', '8000 environment/status', '13000 environment/status', '18000 environment/status']);
  });
});

describe('Environment.info$ (marbles)', () => {
  it('asks environment/info while subscribed, shared, and shows the last info with the error while disconnected', () => {
    const scheduler = testScheduler();
    const asked: string[] = [];
    scheduler.run(({ expectObservable, cold }) => {
      const first = executor(scheduler, asked);
      const { environment, client } = environmentOn(scheduler, first);
      cold('70s x').subscribe(() => first.drop('executor vanished'));
      cold('80s x').subscribe(() => client.close());
      const described$ = environment.info$.pipe(map((s) => (s.status === 'known' ? `known ${s.info.executorVersion ?? ''}` : s.status === 'unavailable' ? `unavailable ${s.error.code} ${s.info?.executorVersion ?? '-'}` : s.status)));
      expectObservable(described$).toBe('k 69999ms u 9999ms (c|)', { k: 'known 0.171.0', u: 'unavailable ENVIRONMENT_RECOVERING 0.171.0', c: 'unavailable CLOSED 0.171.0' });
      expectObservable(described$, '1s ^ 1s !').toBe('1s k', { k: 'known 0.171.0' });
    });
    expect(asked.filter((line) => line.endsWith('environment/info'))).toEqual(['0 environment/info', '60000 environment/info']);
  });
});
