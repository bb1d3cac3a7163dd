/**
 * `HostServer.close()`, the graceful stop, on a real host with a real executor: its steps in order, every
 * event stream (a process's events and the overview) ended by the come-back event with nothing after it,
 * and the executor's process left running (the manager closes without terminating anything).
 */
import { existsSync } from 'node:fs';
import type { HostStopStep } from '../../src/host';
import { startHostServer } from '../../src/host/host-server';
import { paths } from './api/api-client';
import { startApiHost, startProcess } from './api/api-host';
import { within } from './api/sse-reader';

jest.setTimeout(60_000);

const ENV = 'stop-1';
const COME_BACK = 'retry: 250\nevent: restart\ndata: {"retryMs":250}\n\n';

describe('HostServer.close (graceful stop)', () => {
  it('refuses, flushes, ends every event stream with event: restart, closes the logs, then lets the executor go with its process running', async () => {
    const setup = await startApiHost({ environmentId: ENV });
    const started = await startProcess(setup.api, ENV, { argv: ['sh', '-c', 'echo pid $$; exec sleep 30'] });
    const events = await setup.api.events(paths.events(ENV, started.id));
    const overview = await setup.api.events('/api/v1/overview');
    if (!('stream' in events) || !('stream' in overview)) throw new Error('an event stream was refused');
    const first = await events.stream.next((event) => event.event === 'output', 20_000);
    const pid = Number(/^pid (\d+)/.exec(Buffer.from((JSON.parse(first.data) as { chunk: string }).chunk, 'base64').toString())?.[1]);
    expect(Number.isInteger(pid) && existsSync(`/proc/${pid}`)).toBe(true);
    await overview.stream.next((event) => event.event === 'overview', 20_000);

    const steps: HostStopStep[] = [];
    await within(setup.host.close({ retryMs: 250, onStep: (step) => void steps.push(step) }), 20_000, 'the stop');
    expect(steps).toEqual(['refusing', 'flushing output logs', 'ending event streams', 'closing output logs', 'closing executor sockets']);
    for (const stream of [events.stream, overview.stream]) {
      const all = await stream.ended(10_000);
      expect(all[all.length - 1]).toEqual({ id: undefined, event: 'restart', data: '{"retryMs":250}', retry: '250' });
      expect(stream.raw().endsWith(COME_BACK)).toBe(true);
    }
    expect(setup.log).toContain('stopping: 2 event stream(s) ended with the come-back event');
    // The executor keeps its session and its process (it re-dials a host that is gone).
    expect(existsSync(`/proc/${pid}`)).toBe(true);
  });

  it('closes at the end of an `await using` block, as close() does', async () => {
    let url = '';
    {
      await using host = await startHostServer({ credentials: new Map([['AKIDUSING', 'using-secret-do-not-print']]) });
      url = host.url;
      expect((await fetch(`${url}/readyz`, { headers: { connection: 'close' } })).status).toBe(200);
    }
    // Stopped: nothing listens on its port any more.
    await expect(fetch(`${url}/readyz`)).rejects.toThrow('fetch failed');
  });
});
