/** A dialled (listen-mode) executor: the client re-dials and resumes the session by itself after a drop. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { filter, toArray } from 'rxjs/operators';
import { EnvironmentManager } from '../../src';
import { startListeningExecutor, trackForCleanup } from '../support/executor';
import { startDisconnectableProxy } from '../support/ws-proxy';

describe('listen mode with automatic resume', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-listen-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('re-dials the same url after a drop, resumes, and the running process output is complete', async () => {
    const executor = await startListeningExecutor({ wsAuthToken: 'listen-resume-token-42' });
    const proxy = trackForCleanup(await startDisconnectableProxy(executor.url ?? ''));
    const manager = await EnvironmentManager.connect('listen-resume', proxy.url, { clientName: 'spec', headers: { Authorization: 'Bearer listen-resume-token-42' } });
    trackForCleanup({ stop: () => manager.close({ terminateProcesses: true }) });
    const environment = manager.defaultEnvironment();
    if (environment === undefined) throw new Error('no environment');
    const gate = join(work, 'GATE');
    const script = `i=0; while [ ! -f '${gate}' ]; do i=$((i+1)); echo "tick $i"; sleep 0.01; done; echo done`;
    const { process } = await environment.getExecBackend().start({ argv: ['/bin/sh', '-c', script], cwd: work, env: { PATH: '/usr/bin:/bin' } });
    const lines = lastValueFrom(process.lines$('stdout').pipe(toArray()));
    const states = lastValueFrom(environment.connectionState$.pipe(toArray()));
    await firstValueFrom(process.lines$('stdout'));

    const disconnected = firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === 'disconnected')));
    const connections = proxy.connectionCount;
    proxy.pause();
    await disconnected;
    proxy.resume();
    await proxy.waitForConnection(connections + 1);
    await firstValueFrom(environment.connectionState$.pipe(filter((s) => s.state === 'connected')));
    expect(manager.defaultEnvironment()).toBe(environment);
    writeFileSync(gate, '');

    const all = await lines;
    expect(all.at(-1)).toBe('done');
    const ticks = all.slice(0, -1);
    expect(ticks).toEqual(ticks.map((_, i) => `tick ${i + 1}`));
    await manager.close();
    expect((await states).map((s) => s.state)).toEqual(['connected', 'disconnected', 'connected', 'closed']);
  });
});
