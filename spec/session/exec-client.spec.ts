import { firstValueFrom, Subject } from 'rxjs';
import { ResumeFailedError, TransportClosedError } from '../../src/errors';
import type { ClientState } from '../../src/session/exec-session';
import { ExecClient } from '../../src/session/exec-client';
import type { PeerScript } from '../support/fake-socket-port';
import { FakeSocketPort } from '../support/fake-socket-port';
import { testScheduler } from '../support/marbles';

/** A peer that answers initialize with `session-1` (or the scripted error) and nothing else. */
const executor = (log: string[], name: string, initializeError?: { code: number; message: string }): FakeSocketPort => {
  const script: PeerScript = (frame, peer) => {
    if (frame['method'] === 'initialize') {
      log.push(`${name}:initialize ${JSON.stringify(frame['params'])}`);
      if (initializeError === undefined) peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
      else peer.deliver({ id: frame['id'], error: initializeError });
    }
    if (frame['method'] === 'initialized') log.push(`${name}:initialized`);
  };
  return new FakeSocketPort(script);
};

const stateNames = (client: ExecClient): string[] => {
  const names: string[] = [];
  client.state$.subscribe((s: ClientState) => names.push(s.type));
  return names;
};

describe('ExecClient (switchMap over sockets)', () => {
  it('retires the old socket before the replacement handshake and resumes the saved session', async () => {
    const log: string[] = [];
    const sockets = new Subject<FakeSocketPort>();
    const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, rpc: {} });
    const first = executor(log, 'a');
    const started = client.start();
    sockets.next(first);
    await started;
    const second = executor(log, 'b');
    const closedWhenBInitialized: boolean[] = [];
    const originalSend = second.send.bind(second);
    second.send = (frame: string) => {
      closedWhenBInitialized.push(first.closedWith !== undefined);
      originalSend(frame);
    };
    client.markRecovering('replaced');
    sockets.next(second);
    expect(closedWhenBInitialized[0]).toBe(true);
    expect(first.closedWith).toEqual({ initiator: 'local', reason: 'closed by client' });
    expect(log).toEqual([
      'a:initialize {"clientName":"host"}',
      'a:initialized',
      'b:initialize {"clientName":"host","resumeSessionId":"session-1"}',
      'b:initialized',
    ]);
    expect(client.state.type).toBe('connected');
    client.close();
  });

  it('fails with "recovery timed out" when no replacement arrives within the deadline', () => {
    testScheduler().run(({ expectObservable, cold }) => {
      const log: string[] = [];
      const first = executor(log, 'a');
      const sockets = cold<FakeSocketPort>('a', { a: first });
      const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, recoveryDeadlineMs: 25_000, rpc: {} });
      void client.start().catch(() => undefined);
      cold('10ms a').subscribe(() => first.drop('peer vanished'));
      const failure = new ResumeFailedError('timeout', 'exec-server transport disconnected: peer vanished', 'recovery timed out after 25s');
      expectObservable(client.state$).toBe('a 9ms b 24999ms (c|)', {
        a: { type: 'connected', rpc: expect.anything(), sessionId: 'session-1' },
        b: { type: 'recovering', error: new TransportClosedError('remote', 1006, 'peer vanished') },
        c: { type: 'failed', error: failure },
      });
    });
  });

  it('closes a socket answered with -32010 and resumes on the next one', async () => {
    const log: string[] = [];
    const sockets = new Subject<FakeSocketPort>();
    const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, rpc: {} });
    const names = stateNames(client);
    const started = client.start();
    sockets.next(executor(log, 'a'));
    await started;
    client.markRecovering('replaced');
    const rejected = executor(log, 'b', { code: -32010, message: 'session session-1 is already attached to another connection' });
    sockets.next(rejected);
    expect(rejected.closedWith?.initiator).toBe('local');
    expect(client.state.type).toBe('recovering');
    sockets.next(executor(log, 'c'));
    expect(log.slice(-2)).toEqual(['c:initialize {"clientName":"host","resumeSessionId":"session-1"}', 'c:initialized']);
    expect(names).toEqual(['connecting', 'connected', 'recovering', 'recovering', 'connected']);
    client.close();
    expect(names.slice(-1)).toEqual(['closed']);
  });

  it('fails the environment when the executor no longer knows the session', async () => {
    const log: string[] = [];
    const sockets = new Subject<FakeSocketPort>();
    const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, rpc: {} });
    const started = client.start();
    sockets.next(executor(log, 'a'));
    await started;
    client.markRecovering('replaced');
    sockets.next(executor(log, 'b', { code: -32600, message: 'unknown session id session-1' }));
    expect(client.state).toEqual({
      type: 'failed',
      error: new ResumeFailedError('unknownSession', 'exec-server transport disconnected: replaced', 'exec-server rejected initialize (-32600): unknown session id session-1'),
    });
    expect(client.state.type === 'failed' && client.state.error.message).toBe(
      'exec-server transport disconnected: replaced; failed to resume exec-server session: exec-server rejected initialize (-32600): unknown session id session-1',
    );
  });

  it('makes calls made while recovering wait, then run on the new socket; non-replayable calls in flight fail', async () => {
    const log: string[] = [];
    const sockets = new Subject<FakeSocketPort>();
    const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, rpc: {} });
    const started = client.start();
    const first = executor(log, 'a');
    sockets.next(first);
    await started;
    const inFlightStatus = firstValueFrom(client.call('environment/info', undefined));
    const inFlightRead = firstValueFrom(client.call('process/read', { processId: 'p', afterSeq: 0, maxBytes: null, waitMs: 0 }));
    first.drop('gone');
    await expect(inFlightStatus).rejects.toBeInstanceOf(TransportClosedError);
    const second = new FakeSocketPort((frame, peer) => {
      if (frame['method'] === 'initialize') peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
      if (frame['method'] === 'process/read') peer.deliver({ id: frame['id'], result: { chunks: [], nextSeq: 1, exited: false, exitCode: null, closed: false, failure: null, sandboxDenied: false } });
    });
    sockets.next(second);
    await expect(inFlightRead).resolves.toMatchObject({ nextSeq: 1 });
    expect(second.sent.map((m) => m['method'])).toEqual(['initialize', 'initialized', 'process/read']);
    client.close();
  });

  it('carries a held pause over to the replacement socket once its session is resumed', async () => {
    const log: string[] = [];
    const sockets = new Subject<FakeSocketPort>();
    const client = new ExecClient(sockets, { clientName: 'host', reconnectable: true, rpc: {} });
    const started = client.start();
    const first = executor(log, 'a');
    sockets.next(first);
    await started;
    const hold = client.flow.hold();
    expect(first.paused).toBe(true);
    first.drop('gone');
    // No socket to pause while recovering; the hold stays.
    expect(client.flow.facts).toMatchObject({ paused: false, holds: 1, pauses: 1 });
    const second = executor(log, 'b');
    sockets.next(second);
    // The handshake was read (the session resumed), then the socket was paused for the hold.
    expect(log).toEqual(['a:initialize {"clientName":"host"}', 'a:initialized', 'b:initialize {"clientName":"host","resumeSessionId":"session-1"}', 'b:initialized']);
    expect(client.state.type).toBe('connected');
    expect(second.paused).toBe(true);
    expect(client.flow.facts).toMatchObject({ paused: true, holds: 1, pauses: 2 });
    hold.release();
    expect(second.paused).toBe(false);
    expect(client.flow.facts).toMatchObject({ paused: false, holds: 0, pauses: 2 });
    client.close();
  });
});
