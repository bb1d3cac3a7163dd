/**
 * `connectionState$` in virtual time: the five states in order as a UI sees them, over the real
 * ExecClient and its switchMap over accepted sockets (in-memory ports answering after a delay).
 */
import type { Observable } from 'rxjs';
import { map } from 'rxjs/operators';
import type { ConnectionState } from '../../src';
import { toConnectionState } from '../../src/environment/connection-state';
import { AcceptedSockets } from '../../src/session/accepted-sockets';
import { ExecClient } from '../../src/session/exec-client';
import { FakeSocketPort } from '../support/fake-socket-port';
import { testScheduler } from '../support/marbles';
import type { TestScheduler } from 'rxjs/testing';

type Answer = { readonly delayMs: number; readonly error?: { readonly code: number; readonly message: string } };

/** An executor socket that answers `initialize` after `delayMs` of virtual time, with a session or an error. */
function executor(scheduler: TestScheduler, answer: Answer): FakeSocketPort {
  return new FakeSocketPort((frame, peer) => {
    if (frame['method'] !== 'initialize') return;
    const reply = answer.error === undefined ? { result: { sessionId: 'session-1' } } : { error: answer.error };
    scheduler.schedule(() => peer.deliver({ id: frame['id'], ...reply }), answer.delayMs);
  });
}

/** A state as a short string: the name, and for the states that carry one, the error's code and message. */
const describeState = (s: ConnectionState): string => ('error' in s ? `${s.state} ${s.error.code}: ${s.error.message}` : s.state);
const names = (states$: Observable<ConnectionState>): Observable<string> => states$.pipe(map(describeState));

const ATTACHED = { code: -32010, message: 'session session-1 is already attached to another connection' };

describe('Environment.connectionState$ (marbles)', () => {
  it('connect, drop, resume, close: connecting, connected, disconnected, connected, closed', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold }) => {
      const first = executor(scheduler, { delayMs: 3 });
      const accepted = new AcceptedSockets(first);
      const client = new ExecClient(accepted.sockets$, { clientName: 'host', reconnectable: true, recoveryDeadlineMs: 1_000, rpc: {} });
      accepted.watch(client);
      void client.start();
      cold('10ms x').subscribe(() => first.drop('executor vanished'));
      cold('20ms x').subscribe(() => accepted.replace(client, executor(scheduler, { delayMs: 5 })));
      cold('40ms x').subscribe(() => client.close('host shutting down'));
      expectObservable(names(toConnectionState(client.state$))).toBe('a 2ms b 6ms c 14ms d 14ms (e|)', {
        a: 'connecting',
        b: 'connected',
        c: 'disconnected TRANSPORT_CLOSED: exec-server transport disconnected: executor vanished',
        d: 'connected',
        e: 'closed',
      });
    });
  });

  it('connect, drop, deadline: connecting, connected, disconnected, failed', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold }) => {
      const first = executor(scheduler, { delayMs: 3 });
      const accepted = new AcceptedSockets(first);
      const client = new ExecClient(accepted.sockets$, { clientName: 'host', reconnectable: true, recoveryDeadlineMs: 25_000, rpc: {} });
      accepted.watch(client);
      void client.start().catch(() => undefined);
      cold('5ms x').subscribe(() => first.drop('executor vanished'));
      expectObservable(names(toConnectionState(client.state$))).toBe('a 2ms b 1ms c 24999ms (d|)', {
        a: 'connecting',
        b: 'connected',
        c: 'disconnected TRANSPORT_CLOSED: exec-server transport disconnected: executor vanished',
        d: 'failed RESUME_FAILED: exec-server transport disconnected: executor vanished; failed to resume exec-server session: recovery timed out after 25s',
      });
    });
  });

  it('emits disconnected again when the error changes while recovering, not when it repeats', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold }) => {
      const first = executor(scheduler, { delayMs: 3 });
      const accepted = new AcceptedSockets(first);
      const client = new ExecClient(accepted.sockets$, { clientName: 'host', reconnectable: true, recoveryDeadlineMs: 1_000, rpc: {} });
      accepted.watch(client);
      void client.start();
      cold('10ms x').subscribe(() => accepted.replace(client, executor(scheduler, { delayMs: 2, error: ATTACHED })));
      cold('20ms x').subscribe(() => accepted.replace(client, executor(scheduler, { delayMs: 2, error: ATTACHED })));
      cold('30ms x').subscribe(() => accepted.replace(client, executor(scheduler, { delayMs: 2 })));
      cold('50ms x').subscribe(() => client.close());
      expectObservable(names(toConnectionState(client.state$))).toBe('a 2ms b 6ms c 1ms r 19ms d 17ms (e|)', {
        a: 'connecting',
        b: 'connected',
        c: 'disconnected TRANSPORT_CLOSED: exec-server transport disconnected: exec-server executor was replaced',
        r: 'disconnected RPC_ERROR: exec-server rejected initialize (-32010): session session-1 is already attached to another connection',
        d: 'connected',
        e: 'closed',
      });
    });
  });
});
