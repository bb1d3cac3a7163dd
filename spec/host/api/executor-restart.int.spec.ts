/**
 * Issue 38: an executor that restarts under the same id and dials the same host again. Its session is
 * gone, and its processes with it: the host records them `lost` with why (not `failed` by a host-side
 * error), and a reader of such a process's events, following or coming late, gets its output and then
 * `failed` PROCESS_GONE saying why, never an end it would reconnect after forever. Against a real host on a
 * data dir and real codex executors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import { startDirectExecutor } from '../../support/executor';
import { paths } from './api-client';
import { decodeEvents, EXECUTOR_CREDENTIALS, startApiHost, startProcess } from './api-host';

jest.setTimeout(90_000);

const ENV = 'restarted-1';

describe('an executor restarted under the same id, back on the same host', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('leaves its processes lost with why, and their readers get their output then PROCESS_GONE', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-executor-restart-'));
    dirs.push(dataDir);
    const { host, executor, api } = await startApiHost({ environmentId: ENV, host: { outputLog: { dataDir } } });
    const started = await startProcess(api, ENV, { argv: ['sh', '-c', 'echo before; sleep 300'] });
    const follower = await api.events(paths.events(ENV, started.id));
    if (!('stream' in follower)) throw new Error(`events answered ${follower.refused.status}`);
    await follower.stream.next((event) => event.event === 'output', 20_000);

    // The executor goes, with its processes; a new one under the same id registers and dials in.
    await executor.stop();
    await startDirectExecutor({ remoteUrl: host.url, environmentId: ENV, credentials: EXECUTOR_CREDENTIALS });
    await firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === ENV && e.generation === 2 && e.state === 'connected'))));

    const gone = await follower.stream.ended(30_000);
    expect(gone.map((event) => event.event)).toEqual(['output', 'failed']);
    expect({ output: decodeEvents(gone).stdout, failed: JSON.parse(gone.at(-1)?.data ?? '{}') as unknown }).toMatchObject({
      output: 'before\n',
      failed: { code: 'PROCESS_GONE', message: expect.stringContaining('the executor no longer had its session') as string },
    });
    const listed = await api.get(paths.process(ENV, started.id));
    expect(listed.body).toMatchObject({ id: started.id, state: 'lost' });
    // A reader that comes after gets the same: the output, then why it ended.
    const late = await api.events(`${paths.events(ENV, started.id)}?follow=true`);
    if (!('stream' in late)) throw new Error(`events answered ${late.refused.status}`);
    expect((await late.stream.ended(20_000)).map((event) => event.event)).toEqual(['output', 'failed']);
  });
});
