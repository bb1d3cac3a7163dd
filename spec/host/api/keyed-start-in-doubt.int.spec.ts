/**
 * A keyed start retried while the start it recorded is in doubt (recorded `sent`, the executor's socket
 * lost with the answer): until the executor is attached again only its session can tell whether the start
 * happened, so the retry is 503 ENVIRONMENT_RECOVERING (retry), never 409 START_UNKNOWN, which tells the
 * client to start again with a new key (the nemesis's seed 30: told so, while the next owner adopted the
 * process and it ran). Once attached, an executor without the process answers START_UNKNOWN. Real
 * executor behind a TCP proxy that drops the connection; `HostedProcesses` driven directly.
 */
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { Environment } from '../../../src';
import { EnvironmentManager } from '../../../src';
import { HostedProcesses } from '../../../src/host/api/hosted-processes';
import { startDigestOf, startFingerprintOf } from '../../../src/host/api/keyed-starts';
import { MemoryStateStore } from '../../../src/store/memory/memory-state-store';
import { startListeningExecutor, trackForCleanup } from '../../support/executor';
import type { DisconnectableProxy } from '../../support/ws-proxy';
import { startDisconnectableProxy } from '../../support/ws-proxy';

jest.setTimeout(60_000);

const ENV = 'in-doubt-1';
const REQUEST = { argv: ['true'], cwd: '/tmp' };
const KEY = { tokenId: 'token-1', key: 'key-in-doubt' };

const inState = (environment: Environment, state: string): Promise<unknown> => firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === state)));

describe('a keyed start retried while the start it recorded is in doubt', () => {
  let manager: EnvironmentManager;
  let environment: Environment;
  let proxy: DisconnectableProxy;

  beforeAll(async () => {
    const executor = await startListeningExecutor();
    proxy = trackForCleanup(await startDisconnectableProxy(executor.url ?? ''));
    manager = await EnvironmentManager.connect(ENV, proxy.url, { clientName: 'exec-rx-spec' });
    const env = manager.defaultEnvironment();
    if (env === undefined) throw new Error('no default environment');
    environment = env;
  });
  afterAll(async () => {
    proxy.resume();
    await manager.close({ terminateProcesses: true });
  });

  it('is 503 ENVIRONMENT_RECOVERING while the executor is away, and 409 START_UNKNOWN once it is back without the process', async () => {
    const state = new MemoryStateStore();
    // Recorded and sent; the answer never came (the socket went with it).
    await state.recordStart({ digest: startDigestOf(KEY.tokenId, ENV, KEY.key), environmentId: ENV, processId: 'in-doubt', fingerprint: startFingerprintOf(REQUEST) }, 0);
    const processes = new HostedProcesses({ state });
    const away = inState(environment, 'disconnected');
    proxy.pause();
    await away;
    await expect(processes.start(ENV, environment, REQUEST, KEY)).rejects.toMatchObject({ status: 503, code: 'ENVIRONMENT_RECOVERING', headers: { 'retry-after': '1' } });
    const back = inState(environment, 'connected');
    proxy.resume();
    await back;
    await expect(processes.start(ENV, environment, REQUEST, KEY)).rejects.toMatchObject({ status: 409, code: 'START_UNKNOWN' });
  });
});
