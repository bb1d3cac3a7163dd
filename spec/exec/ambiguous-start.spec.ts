/**
 * A start whose socket dropped before its reply (issue 38): it may have happened. The backend terminates
 * that id once connected again and only then lets go of the process's history (its store would list
 * nothing of a start that failed); when the session ends first (a host that let go of the environment, or
 * stops), the history stays as it is, so whoever takes the session back finds the process and takes it
 * back if it runs, or says it was lost if it never did: no process runs that nobody accounts for.
 */
import { firstValueFrom, last, Subject } from 'rxjs';
import { boundedHistories } from '../../src/exec/bounded-histories';
import { ExecBackend } from '../../src/exec/exec-backend';
import type { HistoryFactory, OutputHistory } from '../../src/exec/output-history';
import type { ExecClient } from '../../src/session/exec-client';
import type { PeerScript } from '../support/fake-socket-port';
import { FakeSocketPort } from '../support/fake-socket-port';
import { connectedClient, listEndingWith } from '../support/scripted-client';

/** An executor that never answers a start (it calls `onStart`), and answers a terminate as `terminate` says. */
const executor = (terminate: 'ok' | 'unknown' | 'silent', onStart: () => void = () => undefined): FakeSocketPort => {
  const script: PeerScript = (frame, peer) => {
    const method = frame['method'];
    if (method === 'initialize') return peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
    if (method === 'process/start') return onStart();
    if (method !== 'process/terminate' || terminate === 'silent') return;
    if (terminate === 'ok') return peer.deliver({ id: frame['id'], result: { running: true } });
    peer.deliver({ id: frame['id'], error: { code: -32600, message: 'unknown process id p' } });
  };
  return new FakeSocketPort(script);
};

/** A backend on `first`, whose histories say when they are released. */
async function rig(first: FakeSocketPort): Promise<{ client: ExecClient; sockets: Subject<FakeSocketPort>; backend: ExecBackend; released: Subject<string> }> {
  const { client, sockets } = await connectedClient(first);
  const table = listEndingWith(client);
  const released = new Subject<string>();
  const inner = boundedHistories();
  const outputHistory: HistoryFactory = (processId, launch) => {
    const history: OutputHistory = inner(processId, launch);
    const release = history.release.bind(history);
    history.release = () => {
      released.next(processId);
      release();
    };
    return history;
  };
  return { client, sockets, backend: new ExecBackend(client, () => ({ outputHistory }), table), released };
}

/** Starts `p`, and drops the socket once its start went out (`sent`); resolves with the start's rejection. */
async function startLost(backend: ExecBackend, client: ExecClient, port: FakeSocketPort, sent: Promise<void>): Promise<unknown> {
  const started = backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' }).then(() => 'started', (error: unknown) => error);
  await sent;
  client.markRecovering('replaced');
  port.drop('the socket went');
  return started;
}

/** A first socket whose executor reports the start it got (`sent`). */
function firstSocket(): { port: FakeSocketPort; sent: Promise<void> } {
  let got: () => void = () => undefined;
  const sent = new Promise<void>((resolve) => (got = resolve));
  return { port: executor('silent', () => got()), sent };
}

describe('a start whose socket dropped before its reply', () => {
  it('lets go of its history once the executor terminated that id on the next socket', async () => {
    const first = firstSocket();
    const { client, sockets, backend, released } = await rig(first.port);
    const release = firstValueFrom(released);
    let releasedYet = false;
    void release.then(() => (releasedYet = true));
    expect(await startLost(backend, client, first.port, first.sent)).toMatchObject({ code: 'TRANSPORT_CLOSED' });
    expect(releasedYet).toBe(false);
    const second = executor('ok');
    sockets.next(second);
    expect(await release).toBe('p');
    expect(second.sent.map((frame) => frame['method']).filter((method) => method === 'process/terminate')).toEqual(['process/terminate']);
    client.close();
  });

  it('lets go of it at once when the executor has no such process (the start never happened)', async () => {
    const first = firstSocket();
    const { client, sockets, backend, released } = await rig(first.port);
    const release = firstValueFrom(released);
    await startLost(backend, client, first.port, first.sent);
    sockets.next(executor('unknown'));
    expect(await release).toBe('p');
    client.close();
  });

  it('keeps its history when the session ends first: the host that takes it back accounts for the process', async () => {
    const first = firstSocket();
    const { client, backend, released } = await rig(first.port);
    const seen: string[] = [];
    released.subscribe((id) => seen.push(id));
    await startLost(backend, client, first.port, first.sent);
    client.close('exec-server environment manager closed');
    // The terminate waiting for a connection fails with the close, in the same turn: nothing is released.
    await expect(firstValueFrom(client.state$.pipe(last()))).resolves.toMatchObject({ type: 'closed' });
    expect(seen).toEqual([]);
  });
});
