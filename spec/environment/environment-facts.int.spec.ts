/**
 * `Environment.facts()` and `Environment.diagnostics$`: the figures and the connection's diagnostics an
 * operator reads, from whichever socket is current (a scripted executor on a real loopback socket).
 */
import { firstValueFrom } from 'rxjs';
import { filter, take, toArray } from 'rxjs/operators';
import { EnvironmentManager } from '../../src';
import type { Diagnostic, Environment } from '../../src';
import type { Acceptor } from '../support/acceptor';
import { acceptedFixture } from '../support/accepted-fixture';
import { ScriptedPeer } from '../support/scripted-peer';

const options = { clientName: 'host-test', initializeTimeoutMs: 5_000, keepalive: false } as const;

describe('environment facts and diagnostics', () => {
  const fixture = acceptedFixture();
  const { managers, peers } = fixture;
  let acceptor: Acceptor;
  beforeEach(() => {
    acceptor = fixture.acceptor();
  });

  async function connected(): Promise<{ peer: ScriptedPeer; environment: Environment; manager: EnvironmentManager }> {
    const peer = await ScriptedPeer.dial(acceptor.url);
    peers.push(peer);
    const managerPromise = EnvironmentManager.fromAcceptedWebsocket('environment-1', await acceptor.nextAccepted(), options);
    await peer.completeInitialize('host-test', 'session-1');
    const manager = await managerPromise;
    managers.push(manager);
    const environment = manager.defaultEnvironment();
    if (environment === undefined) throw new Error('the manager has its environment');
    return { peer, environment, manager };
  }

  it('counts the calls waiting on the current connection, and none once answered', async () => {
    const { peer, environment } = await connected();
    expect(environment.facts()).toEqual({
      pendingCalls: 0,
      processRoutes: 0,
      processes: { running: 0, exited: 0, closed: 0, failed: 0 },
      retainedEvents: 0,
      retainedBytes: 0,
      historySubscribers: 0,
    });
    const asking = environment.forceInfo();
    const request = await peer.expectRequest('environment/info');
    expect(environment.facts().pendingCalls).toBe(1);
    peer.reply(request.id, { shell: { name: 'sh', path: '/bin/sh' }, executorVersion: '0.171.0', cwd: null });
    await asking;
    expect(environment.facts().pendingCalls).toBe(0);
  });

  it('counts listed processes by state, with what their histories hold', async () => {
    const { peer, environment } = await connected();
    const starting = environment.getExecBackend().start({ processId: 'p1', argv: ['true'], cwd: '/' });
    const start = await peer.expectRequest('process/start');
    peer.reply(start.id, { processId: 'p1' });
    const { process } = await starting;
    peer.send({ method: 'process/output', params: { processId: 'p1', seq: 1, stream: 'stdout', chunk: Buffer.from('hello').toString('base64') } });
    await firstValueFrom(process.events$.pipe(filter((event) => event.type === 'output')));
    expect(environment.facts()).toMatchObject({ processRoutes: 1, processes: { running: 1, exited: 0, closed: 0, failed: 0 }, retainedEvents: 1, retainedBytes: 5 });
    peer.send({ method: 'process/exited', params: { processId: 'p1', seq: 2, exitCode: 0, sandboxDenied: false } });
    peer.send({ method: 'process/closed', params: { processId: 'p1', seq: 3 } });
    await firstValueFrom(process.state$.pipe(filter((state) => state === 'closed')));
    expect(environment.facts()).toMatchObject({ processes: { running: 0, exited: 0, closed: 1, failed: 0 }, retainedEvents: 3, retainedBytes: 5 });
  });

  it('reports diagnostics of the current socket, across a replacement, and completes when the environment closes', async () => {
    const { peer, environment, manager } = await connected();
    const seen: Diagnostic[] = [];
    let completed = false;
    environment.diagnostics$.subscribe({ next: (diagnostic) => seen.push(diagnostic), complete: () => (completed = true) });
    const first = firstValueFrom(environment.diagnostics$.pipe(take(1)));
    peer.socket.send('this is not JSON');
    expect(await first).toMatchObject({ type: 'unparsableFrame', error: { code: 'DECODE_FAILED' } });

    const replacementPeer = await ScriptedPeer.dial(acceptor.url);
    peers.push(replacementPeer);
    await manager.replaceAcceptedWebsocket('environment-1', await acceptor.nextAccepted());
    await peer.closed;
    await replacementPeer.completeInitialize('host-test', 'session-1', 'session-1');
    await firstValueFrom(environment.connectionState$.pipe(filter((state) => state.state === 'connected')));
    const next = firstValueFrom(environment.diagnostics$.pipe(take(2), toArray()));
    replacementPeer.send({ id: 4242, result: {} });
    replacementPeer.send({ method: 'some/unknownNotification', params: {} });
    expect(await next).toEqual([
      { type: 'unknownResponse', id: 4242 },
      { type: 'unknownNotification', method: 'some/unknownNotification' },
    ]);
    expect(seen.map((diagnostic) => diagnostic.type)).toEqual(['unparsableFrame', 'unknownResponse', 'unknownNotification']);

    await manager.close();
    expect(completed).toBe(true);
  });
});
