/** Marble specs of the replacement stream: a switchMap over the admitted sockets, in virtual time. */
import { map } from 'rxjs/operators';
import { AcceptedSockets } from '../../src/session/accepted-sockets';
import { ExecClient } from '../../src/session/exec-client';
import { FakeSocketPort } from '../support/fake-socket-port';
import { testScheduler } from '../support/marbles';

/** An executor that answers initialize after `delayMs` of virtual time (or with an error), logging what happens to it. */
function executor(name: string, log: string[], now: () => number, answer: { delayMs: number; error?: { code: number; message: string } }, schedule: (fn: () => void, delayMs: number) => void): FakeSocketPort {
  const port = new FakeSocketPort((frame, peer) => {
    if (frame['method'] === 'initialize') {
      log.push(`${now()} ${name} initialize ${JSON.stringify(frame['params'])}`);
      schedule(() => peer.deliver({ id: frame['id'], ...(answer.error === undefined ? { result: { sessionId: 'session-1' } } : { error: answer.error }) }), answer.delayMs);
    }
  });
  const close = port.close.bind(port);
  port.close = (reason?: string) => {
    if (port.isOpen) log.push(`${now()} ${name} closed`);
    close(reason);
  };
  return port;
}

describe('AcceptedSockets + ExecClient (marbles)', () => {
  it('tears the old socket down before the new handshake, retries after -32010 on the next socket', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold }) => {
      const log: string[] = [];
      const now = (): number => scheduler.now();
      const schedule = (fn: () => void, delayMs: number): void => {
        scheduler.schedule(fn, delayMs);
      };
      const a = executor('a', log, now, { delayMs: 2 }, schedule);
      const b = executor('b', log, now, { delayMs: 3, error: { code: -32010, message: 'session session-1 is already attached to another connection' } }, schedule);
      const c = executor('c', log, now, { delayMs: 4 }, schedule);
      const accepted = new AcceptedSockets(a);
      const client = new ExecClient(accepted.sockets$, { clientName: 'host', reconnectable: true, recoveryDeadlineMs: 1_000, rpc: {} });
      accepted.watch(client);
      void client.start();
      cold('10ms x').subscribe(() => accepted.replace(client, b));
      cold('20ms x').subscribe(() => accepted.replace(client, c));
      cold('40ms x').subscribe(() => client.close());

      // Recovering again at 13 with the new reason (b's -32010), connected on c at 24, closed at 40.
      expectObservable(client.state$.pipe(map((s) => (s.type === 'recovering' ? `recovering: ${s.error.message}` : s.type)))).toBe('a 1ms b 7ms c 2ms r 10ms d 15ms (e|)', {
        a: 'connecting',
        b: 'connected',
        c: 'recovering: exec-server transport disconnected: exec-server executor was replaced',
        r: 'recovering: exec-server rejected initialize (-32010): session session-1 is already attached to another connection',
        d: 'connected',
        e: 'closed',
      });
      scheduler.flush();
      expect(log).toEqual([
        '0 a initialize {"clientName":"host"}',
        '10 a closed',
        '10 b initialize {"clientName":"host","resumeSessionId":"session-1"}',
        '13 b closed',
        '20 c initialize {"clientName":"host","resumeSessionId":"session-1"}',
        '40 c closed',
      ]);
    });
  });

  it('fails at the recovery deadline when no replacement is adopted', () => {
    const scheduler = testScheduler();
    scheduler.run(({ expectObservable, cold }) => {
      const log: string[] = [];
      const a = executor('a', log, () => scheduler.now(), { delayMs: 0 }, (fn, ms) => void scheduler.schedule(fn, ms));
      const accepted = new AcceptedSockets(a);
      const client = new ExecClient(accepted.sockets$, { clientName: 'host', reconnectable: true, recoveryDeadlineMs: 25_000, rpc: {} });
      accepted.watch(client);
      void client.start().catch(() => undefined);
      cold('5ms x').subscribe(() => a.drop('gone'));
      expectObservable(client.state$.pipe(map((s) => (s.type === 'failed' ? s.error.message : s.type)))).toBe('b 4ms c 24999ms (d|)', {
        b: 'connected',
        c: 'recovering',
        d: 'exec-server transport disconnected: gone; failed to resume exec-server session: recovery timed out after 25s',
      });
    });
  });
});
