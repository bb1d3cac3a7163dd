/** How an accepted-socket environment ends: unknown session on resume, and the recovery deadline. */
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { filter, toArray } from 'rxjs/operators';
import type { Environment, EnvironmentManagerOptions, ExecProcess } from '../../src';
import { EnvironmentFailedError, EnvironmentManager, ResumeFailedError } from '../../src';
import type { Acceptor } from '../support/acceptor';
import { startAcceptor } from '../support/acceptor';
import { ScriptedPeer } from '../support/scripted-peer';

const options = (extra: Partial<EnvironmentManagerOptions> = {}): EnvironmentManagerOptions => ({ clientName: 'host-test', keepalive: false, ...extra });

async function adopted(acceptor: Acceptor, extra: Partial<EnvironmentManagerOptions> = {}): Promise<{ peer: ScriptedPeer; manager: EnvironmentManager; environment: Environment; process: ExecProcess }> {
  const peer = await ScriptedPeer.dial(acceptor.url);
  const managerPromise = EnvironmentManager.fromAcceptedWebsocket('environment-1', await acceptor.nextAccepted(), options(extra));
  await peer.completeInitialize('host-test', 'session-1');
  const manager = await managerPromise;
  const environment = manager.defaultEnvironment();
  if (environment === undefined) throw new Error('no environment');
  const starting = environment.getExecBackend().start({ processId: 'process-1', argv: ['sleep', '100'], cwd: '/tmp' });
  const start = await peer.expectRequest('process/start');
  peer.reply(start.id, { processId: 'process-1', sandboxType: 'none' });
  return { peer, manager, environment, process: (await starting).process };
}

describe('accepted environment failures', () => {
  let acceptor: Acceptor;
  beforeEach(async () => {
    acceptor = await startAcceptor();
  });
  afterEach(() => acceptor.close());

  it('fails the environment and its processes when the executor no longer knows the session', async () => {
    const { peer, manager, environment, process } = await adopted(acceptor);
    const states = lastValueFrom(environment.connectionState$.pipe(toArray()));
    const events = lastValueFrom(process.events$.pipe(toArray()));
    peer.close();
    const replacement = await ScriptedPeer.dial(acceptor.url);
    await manager.replaceAcceptedWebsocket('environment-1', await acceptor.nextAccepted());
    const initialize = await replacement.expectRequest('initialize');
    replacement.replyError(initialize.id, -32600, 'unknown session id session-1');

    const stateList = await states;
    expect(stateList.map((s) => s.state)).toEqual(['connected', 'disconnected', 'failed']);
    const failure = stateList.at(-1);
    expect(failure?.state === 'failed' ? failure.error : undefined).toBeInstanceOf(ResumeFailedError);
    expect(failure).toMatchObject({ error: { code: 'RESUME_FAILED', reason: 'unknownSession' } });
    expect(await events).toEqual([{ type: 'failed', error: expect.objectContaining({ code: 'PROCESS_FAILED', processId: 'process-1' }) }]);
    // A call on the failed environment: ENVIRONMENT_FAILED (README, Errors), the failure as its cause.
    const call = await environment.forceInfo().then(() => undefined, (e: unknown) => e);
    expect(call).toBeInstanceOf(EnvironmentFailedError);
    expect(call).toMatchObject({ code: 'ENVIRONMENT_FAILED', environmentId: 'environment-1', cause: { code: 'RESUME_FAILED', reason: 'unknownSession' } });
    expect((call as EnvironmentFailedError).cause).toBe(failure?.state === 'failed' ? failure.error : undefined);
    expect(await manager.getEnvironmentStatus('environment-1')).toMatchObject({ status: 'disconnected', error: { code: 'RESUME_FAILED' } });
    await replacement.closed;
    await manager.close();
  });

  it('fails the environment and its processes when the recovery deadline passes', async () => {
    const { peer, manager, environment, process } = await adopted(acceptor, { recoveryDeadlineMs: 200 });
    const states = lastValueFrom(environment.connectionState$.pipe(toArray()));
    const events = lastValueFrom(process.events$.pipe(toArray()));
    peer.close();
    const stateList = await states;
    expect(stateList.map((s) => s.state)).toEqual(['connected', 'disconnected', 'failed']);
    expect(stateList.at(-1)).toMatchObject({ error: { code: 'RESUME_FAILED', reason: 'timeout', message: expect.stringContaining('failed to resume exec-server session: recovery timed out after 200ms') } });
    expect((await events).at(-1)).toMatchObject({ type: 'failed', error: { code: 'PROCESS_FAILED' } });
    const late = await ScriptedPeer.dial(acceptor.url);
    await expect(manager.replaceAcceptedWebsocket('environment-1', await acceptor.nextAccepted())).rejects.toMatchObject({ code: 'REPLACEMENT_REJECTED' });
    await late.closed;
    await manager.close();
  });

  it('rejects a call waiting for recovery with the failure itself, and every call made after it with ENVIRONMENT_FAILED', async () => {
    const { peer, manager, environment, process } = await adopted(acceptor, { recoveryDeadlineMs: 200 });
    const disconnected = firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === 'disconnected')));
    peer.close();
    await disconnected;
    const waiting = environment.forceInfo().then(() => undefined, (e: unknown) => e);
    const failed = await lastValueFrom(environment.connectionState$);
    const failure = failed.state === 'failed' ? failed.error : undefined;
    expect(failure).toMatchObject({ code: 'RESUME_FAILED', reason: 'timeout' });
    // README, Reconnect and resume semantics: new calls wait during recovery, then reject with the failure.
    expect(await waiting).toBe(failure);
    // README, Errors: a call on a failed environment rejects ENVIRONMENT_FAILED, its cause the failure.
    const calls: readonly (() => Promise<unknown>)[] = [
      () => environment.forceInfo(),
      () => environment.getExecBackend().start({ argv: ['true'], cwd: '/tmp' }),
      () => environment.getFilesystem().readFile('/etc/hostname'),
      () => environment.getHttpClient().request({ method: 'GET', url: 'http://127.0.0.1:9/' }),
      () => process.terminate(),
    ];
    for (const call of calls) {
      const error = await call().then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(EnvironmentFailedError);
      expect(error).toMatchObject({ code: 'ENVIRONMENT_FAILED', environmentId: 'environment-1', message: `environment environment-1 failed: ${failure?.message ?? ''}` });
      expect((error as EnvironmentFailedError).cause).toBe(failure);
    }
    await manager.close();
  });

  it('reports disconnected at once while recovering, without waiting', async () => {
    const { peer, manager, environment } = await adopted(acceptor);
    const disconnected = firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === 'disconnected')));
    peer.close();
    await disconnected;
    expect(await manager.getEnvironmentStatus('environment-1')).toMatchObject({ status: 'disconnected', error: { code: 'ENVIRONMENT_RECOVERING', message: 'exec-server environment is recovering' } });
    expect(await manager.getEnvironmentStatus('no-such-environment')).toBeUndefined();
    await manager.close();
  });
});
