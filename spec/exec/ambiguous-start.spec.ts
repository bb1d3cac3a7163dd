/**
 * A start whose socket dropped before its reply (issue 38): it may have happened. The backend terminates
 * that id once connected again and only then lets go of the process's history (its store would list
 * nothing of a start that failed); when the session ends first (a host that let go of the environment, or
 * stops), the history stays as it is, so whoever takes the session back finds the process and takes it
 * back if it runs, or says it was lost if it never did: no process runs that nobody accounts for.
 */
import { firstValueFrom, last, Subject, VirtualTimeScheduler } from 'rxjs';
import { boundedHistories } from '../../src/exec/bounded-histories';
import { ExecBackend } from '../../src/exec/exec-backend';
import type { HistoryFactory, OutputHistory } from '../../src/exec/output-history';
import type { RpcConnectionOptions } from '../../src/rpc/rpc-options';
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

/** What the rig's histories were told: released (by process id), discarded, and each failure's message. */
interface Told {
  readonly released: Subject<string>;
  readonly discarded: string[];
  readonly failures: string[];
}

/** A backend on `first` (its connections with `rpc`), whose histories say what they were told. */
async function rig(first: FakeSocketPort, rpc: RpcConnectionOptions = {}): Promise<{ client: ExecClient; sockets: Subject<FakeSocketPort>; backend: ExecBackend } & Told> {
  const { client, sockets } = await connectedClient(first, rpc);
  const table = listEndingWith(client);
  const told: Told = { released: new Subject<string>(), discarded: [], failures: [] };
  const inner = boundedHistories();
  const outputHistory: HistoryFactory = (processId, launch) => {
    const history: OutputHistory = inner(processId, launch);
    const release = history.release.bind(history);
    const append = history.append.bind(history);
    history.release = () => {
      told.released.next(processId);
      release();
    };
    history.discard = () => {
      told.discarded.push(processId);
      release();
    };
    history.append = (event) => {
      if (event.type === 'failed') told.failures.push(event.error.message);
      append(event);
    };
    return history;
  };
  return { client, sockets, backend: new ExecBackend(client, () => ({ outputHistory }), table), ...told };
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

describe('a start sent and not answered in time', () => {
  it('may have begun: the executor terminates that id, then its history ends lost saying so (it is never discarded)', async () => {
    const scheduler = new VirtualTimeScheduler();
    let got: () => void = () => undefined;
    const sent = new Promise<void>((resolve) => (got = resolve));
    const port = executor('ok', () => got());
    const { client, backend, released, discarded, failures } = await rig(port, { requestTimeoutMs: 30_000, scheduler });
    const release = firstValueFrom(released);
    const started = backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' }).then(() => 'started', (error: unknown) => error);
    await sent;
    scheduler.flush();
    expect(await started).toMatchObject({ code: 'REQUEST_TIMEOUT' });
    expect(await release).toBe('p');
    expect(port.sent.map((frame) => frame['method']).filter((method) => method === 'process/terminate')).toEqual(['process/terminate']);
    expect({ discarded, failures }).toEqual({ discarded: [], failures: [expect.stringMatching(/its start was not answered \(.*the start was not answered in time/)] });
    client.close();
  });
});

describe('a start refused', () => {
  it('before it was sent (its client closed): the process never ran, and its history is discarded, not released', async () => {
    const first = firstSocket();
    const { client, backend, released, discarded } = await rig(first.port);
    const seen: string[] = [];
    released.subscribe((id) => seen.push(id));
    client.markRecovering('replaced');
    first.port.drop('the socket went');
    const started = backend.start({ processId: 'p', argv: ['x'], cwd: '/tmp' }).then(() => 'started', (error: unknown) => error);
    client.close('exec-server environment manager closed');
    expect(await started).toMatchObject({ code: 'CLOSED' });
    expect({ discarded, released: seen, sent: first.port.sent.filter((frame) => frame['method'] === 'process/start').length }).toEqual({ discarded: ['p'], released: [], sent: 0 });
  });

  it('by the executor (its error answer): its history is discarded', async () => {
    const refusing = new FakeSocketPort((frame, peer) => {
      if (frame['method'] === 'initialize') return peer.deliver({ id: frame['id'], result: { sessionId: 'session-1' } });
      if (frame['method'] === 'process/start') peer.deliver({ id: frame['id'], error: { code: -32603, message: 'No such file or directory (os error 2)', data: { kind: 'spawnNotFound' } } });
    });
    const { client, backend, discarded } = await rig(refusing);
    await expect(backend.start({ processId: 'missing', argv: ['no-such-program'], cwd: '/tmp' })).rejects.toMatchObject({ code: 'SPAWN_FAILED' });
    expect(discarded).toEqual(['missing']);
    client.close();
  });
});
