/**
 * HostClient.run and HostClient.wait against a real host and the real executor: run's exit code and
 * output (bounded: the first bytes kept, `truncated`, no character split), wait for a process that is
 * running and for one that exited, wait across a dropped connection (a cutting proxy), and an abort
 * that rejects with its reason (and terminates the process when asked).
 */
import type { ApiHost } from './client-setup';
import { countingFetch, hostClient, PATH_ENV, portOf, startApiHost, within } from './client-setup';
import { trackForCleanup } from '../support/executor';
import { startSseProxy } from '../support/sse-proxy';

jest.setTimeout(60_000);

const ENV = 'client-run-wait';

describe('HostClient.run and HostClient.wait', () => {
  let setup: ApiHost;

  /** Resolves once the host counts `count` open waits (`GET /host`), bounded. */
  async function openWaits(count: number): Promise<void> {
    const seen = async (): Promise<void> => {
      for (;;) {
        const body = (await setup.api.get('/api/v1/host')).body as { waits?: number };
        if (body.waits === count) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await within(seen(), 10_000, `${count} open wait(s)`);
  }

  beforeAll(async () => {
    setup = await startApiHost({ environmentId: ENV });
  });

  it('run: resolves with the exit code, stdout and stderr, and when it exited', async () => {
    const result = await hostClient(setup.host.url).run(ENV, { argv: ['/bin/sh', '-c', 'printf hello; printf oops >&2; exit 3'], cwd: '/tmp', env: PATH_ENV });
    expect(result).toMatchObject({ exitCode: 3, stdout: 'hello', stderr: 'oops', pty: '', truncated: false });
    expect(Buffer.from(result.bytes.stdout).toString('utf8')).toBe('hello');
    expect(Number.isNaN(Date.parse(result.exitedAt ?? ''))).toBe(false);
    expect(Date.parse(result.startedAt ?? '')).toBeLessThanOrEqual(Date.parse(result.exitedAt ?? ''));
  });

  it('run: past maxOutputBytes keeps the first bytes and says truncated; a character the bound cuts is left out', async () => {
    const many = await hostClient(setup.host.url).run(ENV, { argv: ['/bin/sh', '-c', "head -c 200000 /dev/zero | tr '\\0' a; echo done >&2"], cwd: '/tmp', env: PATH_ENV }, { maxOutputBytes: 1000 });
    expect({ length: many.stdout.length, only: /^a+$/.test(many.stdout), stderr: many.stderr, truncated: many.truncated, exitCode: many.exitCode }).toEqual({ length: 1000, only: true, stderr: 'done\n', truncated: true, exitCode: 0 });
    const accents = await hostClient(setup.host.url).run(ENV, { argv: ['/bin/sh', '-c', 'printf "éé"'], cwd: '/tmp', env: PATH_ENV }, { maxOutputBytes: 3 });
    expect({ stdout: accents.stdout, bytes: accents.bytes.stdout.length, truncated: accents.truncated }).toEqual({ stdout: 'é', bytes: 3, truncated: true });
  });

  it('wait: resolves once a running process exits, and at once for one that has', async () => {
    const client = hostClient(setup.host.url);
    const process = await client.start(ENV, { argv: ['/bin/sh', '-c', 'read line; exit 5'], pipeStdin: true, cwd: '/tmp', env: PATH_ENV });
    const waited = client.wait(ENV, process.id);
    await openWaits(1);
    await client.write(ENV, process.id, 'go\n');
    const exit = await within(waited, 10_000, 'the wait');
    expect(exit.exitCode).toBe(5);
    expect(typeof exit.exitedAt).toBe('string');
    expect(await within(client.wait(ENV, process.id), 10_000, 'the second wait')).toEqual(exit);
    await openWaits(0);
  });

  it('wait: rides through a dropped connection', async () => {
    const proxy = trackForCleanup(await startSseProxy(portOf(setup.host.url)));
    const counting = countingFetch();
    const direct = hostClient(setup.host.url);
    const process = await direct.start(ENV, { argv: ['/bin/sh', '-c', 'read line; exit 6'], pipeStdin: true, cwd: '/tmp', env: PATH_ENV });
    const waited = hostClient(proxy.origin, { fetch: counting.fetch }).wait(ENV, process.id);
    await openWaits(1);
    expect(proxy.cutAll()).toBe(1);
    // The client asks again: a second attempt, and the host holds one open wait again.
    await within(counting.failed(1), 10_000, 'the cut seen by the client');
    await openWaits(1);
    await direct.write(ENV, process.id, 'go\n');
    expect((await within(waited, 10_000, 'the wait')).exitCode).toBe(6);
    expect(counting.attempts()).toBeGreaterThanOrEqual(2);
  });

  it('wait: rejects PROCESS_NOT_FOUND for no such process', async () => {
    await expect(hostClient(setup.host.url).wait(ENV, 'no-such-process')).rejects.toMatchObject({ code: 'PROCESS_NOT_FOUND', status: 404 });
  });

  it('run: an abort rejects with its reason, and terminateOnAbort terminates the process', async () => {
    const client = hostClient(setup.host.url);
    const controller = new AbortController();
    const reason = new Error('enough');
    const running = client.run(ENV, { argv: ['/bin/sh', '-c', 'echo started; sleep 60'], cwd: '/tmp', env: PATH_ENV }, { signal: controller.signal, terminateOnAbort: true });
    const listed = await within(waitForListed(client, ENV), 10_000, 'the process listed');
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect((await within(client.wait(ENV, listed), 10_000, 'the terminated process')).exitCode).toBe(137);
  });

  it('run: an abort before the start was answered still terminates the process it started (terminateOnAbort)', async () => {
    const client = hostClient(setup.host.url);
    const controller = new AbortController();
    const script = 'echo early; sleep 61';
    const running = client.run(ENV, { argv: ['/bin/sh', '-c', script], cwd: '/tmp', env: PATH_ENV }, { signal: controller.signal, terminateOnAbort: true });
    controller.abort();
    await expect(running).rejects.toBe(controller.signal.reason);
    // The start went on: the process it made is terminated once its answer came.
    const id = await within(waitForAny(client, ENV, script), 10_000, 'the process listed');
    expect((await within(client.wait(ENV, id), 10_000, 'the terminated process')).exitCode).toBe(137);
  });
});

/** The id of the first process of `environmentId` whose argv includes `marker`, in any state (from the processes stream). */
async function waitForAny(client: ReturnType<typeof hostClient>, environmentId: string, marker: string): Promise<string> {
  for await (const list of client.processes(environmentId)) {
    const found = list.find((p) => p.argv.includes(marker));
    if (found !== undefined) return found.id;
  }
  throw new Error('the processes stream ended');
}

/** The id of the first running process of `environmentId` (from the processes stream). */
async function waitForListed(client: ReturnType<typeof hostClient>, environmentId: string): Promise<string> {
  for await (const list of client.processes(environmentId)) {
    const running = list.find((p) => p.state === 'running' && p.argv.includes('echo started; sleep 60'));
    if (running !== undefined) return running.id;
  }
  throw new Error('the processes stream ended');
}
