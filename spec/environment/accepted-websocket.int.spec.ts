/**
 * The user's scenarios (shared/seed/accepted_websocket.rs), ported line for line in meaning: a `ws`
 * acceptor on 127.0.0.1:0 plays the seed's axum router, and a `ws` client scripts the executor.
 */
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import { EnvironmentManager, ReplacementRejectedError } from '../../src';
import type { ConnectionState, EnvironmentManager as Manager, EnvironmentManagerOptions } from '../../src';
import type { Acceptor } from '../support/acceptor';
import { acceptedFixture } from '../support/accepted-fixture';
import { ScriptedPeer } from '../support/scripted-peer';

const SESSION_ALREADY_ATTACHED_ERROR_CODE = -32010;

const acceptedOptions = (): EnvironmentManagerOptions => ({ clientName: 'host-test', initializeTimeoutMs: 5_000, keepalive: false });

/** The seed's `connect_executor`: an executor dials in and the host adopts its socket. */
async function connectExecutor(acceptor: Acceptor, sessionId: string): Promise<{ socket: ScriptedPeer; manager: EnvironmentManager }> {
  const socket = await ScriptedPeer.dial(acceptor.url);
  const accepted = await acceptor.nextAccepted();
  const managerPromise = EnvironmentManager.fromAcceptedWebsocket('environment-1', accepted, acceptedOptions());
  await socket.completeInitialize('host-test', sessionId);
  return { socket, manager: await managerPromise };
}

/** The seed's `connect_replacement_executor`. */
async function connectReplacementExecutor(acceptor: Acceptor): Promise<{ socket: ScriptedPeer; accepted: Awaited<ReturnType<Acceptor['nextAccepted']>> }> {
  const socket = await ScriptedPeer.dial(acceptor.url);
  return { socket, accepted: await acceptor.nextAccepted() };
}

/** The default environment's connection state once it is `connected` (after a replacement: connected again). */
function connectedAgain(manager: Manager): Promise<ConnectionState> {
  const environment = manager.defaultEnvironment();
  if (environment === undefined) throw new Error('default environment should be installed');
  return firstValueFrom(environment.connectionState$.pipe(filter((state) => state.state === 'connected')));
}

const emptyRead = { chunks: [], nextSeq: 1, exited: false, exitCode: null, closed: false, failure: null, sandboxDenied: false };

describe('accepted websocket', () => {
  const fixture = acceptedFixture();
  const { managers, peers } = fixture;
  let acceptor: Acceptor;
  beforeEach(() => {
    acceptor = fixture.acceptor();
  });

  it('rejects initial resume session id', async () => {
    const socket = await ScriptedPeer.dial(acceptor.url);
    peers.push(socket);
    const accepted = await acceptor.nextAccepted();

    const error = await EnvironmentManager.fromAcceptedWebsocket('environment-1', accepted, { ...acceptedOptions(), resumeSessionId: 'session-1' }).then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(ReplacementRejectedError);
    expect(error).toMatchObject({ code: 'REPLACEMENT_REJECTED', message: expect.stringContaining('initial connection cannot resume a session') });
    await socket.closed; // a socket the manager refuses, it closes
  });

  it('environment info comes from initialize metadata (upstream scenario)', async () => {
    const socket = await ScriptedPeer.dial(acceptor.url);
    peers.push(socket);
    const accepted = await acceptor.nextAccepted();
    const managerPromise = EnvironmentManager.fromAcceptedWebsocket('environment-1', accepted, acceptedOptions());
    const initialize = await socket.expectRequest('initialize');
    const environmentInfo = { shell: { name: 'bash', path: '/bin/bash' }, executorVersion: '0.171.0', cwd: 'file:///workspace', prependPathDirs: ['file:///opt/bin'], capabilities: { fsWatchMissing: true } };
    socket.reply(initialize.id, { sessionId: 'session-1', environmentInfo });
    expect(await socket.receive()).toEqual({ method: 'initialized', params: {} });
    const manager = await managerPromise;
    managers.push(manager);

    const environment = manager.defaultEnvironment();
    expect(await environment?.info()).toEqual(environmentInfo);

    // No environment/info request was sent: the next thing on the wire is the status probe.
    const status = manager.getEnvironmentStatus('environment-1');
    const probe = await socket.receive();
    expect(probe).toMatchObject({ method: 'environment/status' });
    socket.reply(probe['id'], { status: 'ready' });
    expect(await status).toEqual({ status: 'ready' });
  });

  it('environment is ready immediately', async () => {
    const { socket, manager } = await connectExecutor(acceptor, 'session-1');
    peers.push(socket);
    managers.push(manager);

    const statusTask = manager.getEnvironmentStatus('environment-1');
    const request = await socket.expectRequest('environment/status');
    socket.reply(request.id, { status: 'ready' });

    expect(await statusTask).toEqual({ status: 'ready' });
  });

  it('replacement retires old socket and retries', async () => {
    const { socket: firstSocket, manager } = await connectExecutor(acceptor, 'session-1');
    peers.push(firstSocket);
    managers.push(manager);
    const rejected = await connectReplacementExecutor(acceptor);
    peers.push(rejected.socket);

    await manager.replaceAcceptedWebsocket('environment-1', rejected.accepted);
    // The previous accepted websocket is retired before the replacement is initialized.
    await firstSocket.closed;
    const initialize = await rejected.socket.expectRequest('initialize');
    expect(initialize.params).toEqual({ clientName: 'host-test', resumeSessionId: 'session-1' });

    const overlapping = await connectReplacementExecutor(acceptor);
    peers.push(overlapping.socket);
    const overlap = await manager.replaceAcceptedWebsocket('environment-1', overlapping.accepted).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(overlap).toBeInstanceOf(ReplacementRejectedError);
    expect(overlap).toMatchObject({ code: 'REPLACEMENT_REJECTED', message: expect.stringContaining('an accepted exec-server replacement is already in progress') });
    await overlapping.socket.closed;

    rejected.socket.replyError(initialize.id, SESSION_ALREADY_ATTACHED_ERROR_CODE, 'session session-1 is already attached to another connection');
    // The rejected replacement websocket closes.
    await rejected.socket.closed;

    const replacement = await connectReplacementExecutor(acceptor);
    peers.push(replacement.socket);
    await manager.replaceAcceptedWebsocket('environment-1', replacement.accepted);
    await replacement.socket.completeInitialize('host-test', 'session-1', 'session-1');
    // The environment is connected again, on the replacement.
    expect(await connectedAgain(manager)).toEqual({ state: 'connected' });
  });

  it('reconnect recovers running process and output', async () => {
    const { socket: firstSocket, manager } = await connectExecutor(acceptor, 'session-1');
    peers.push(firstSocket);
    managers.push(manager);
    const environment = manager.defaultEnvironment();
    if (environment === undefined) throw new Error('default environment should be installed');
    const backend = environment.getExecBackend();

    const processTask = backend.start({ processId: 'process-1', argv: ['test-command'], cwd: 'file:///workspace', env: {}, tty: false, pipeStdin: false, arg0: null });
    const start = await firstSocket.expectRequest('process/start');
    expect(start.params).toMatchObject({ processId: 'process-1' });
    firstSocket.reply(start.id, { processId: 'process-1', sandboxType: 'none' });
    const { process } = await processTask;

    firstSocket.close();
    const replacement = await connectReplacementExecutor(acceptor);
    peers.push(replacement.socket);
    await manager.replaceAcceptedWebsocket('environment-1', replacement.accepted);
    await replacement.socket.completeInitialize('host-test', 'session-1', 'session-1');

    const recovery = await replacement.socket.expectRequest('process/read');
    expect(recovery.params).toEqual({ processId: 'process-1', afterSeq: 0, maxBytes: null, waitMs: 0 });
    replacement.socket.reply(recovery.id, emptyRead);

    const readTask = process.read(0, null, 0);
    const read = await replacement.socket.expectRequest('process/read');
    expect(read.params).toEqual({ processId: 'process-1', afterSeq: 0, maxBytes: null, waitMs: 0 });
    replacement.socket.reply(read.id, emptyRead);
    expect(await readTask).toEqual(emptyRead);
    expect(await connectedAgain(manager)).toEqual({ state: 'connected' });
  });
});
