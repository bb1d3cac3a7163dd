/**
 * `POST …/processes/{processId}/wait` against a real host and a real codex executor: it answers once the
 * process exits, at once for one that has, 404 for none; a client that goes away leaves no wait behind;
 * and the host's stop answers an open wait 503 with `Retry-After`.
 */
import { paths } from './api-client';
import type { ApiHost } from './api-host';
import { b64, expectProblem, expectStatus, finished, startApiHost, startProcess } from './api-host';
import { within } from './sse-reader';

const ENV = 'wait-1';
const waitPath = (processId: string): string => `${paths.process(ENV, processId)}/wait`;

/** Resolves once the host's `GET /host` counts `count` open waits (bounded: `within`). */
async function openWaits(setup: ApiHost, count: number): Promise<void> {
  const seen = async (): Promise<void> => {
    for (;;) {
      const body = expectStatus(await setup.api.get(paths.host), 200) as { waits: number };
      if (body.waits === count) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await within(seen(), 10_000, `${count} open wait(s)`);
}

describe('operator API: wait', () => {
  let setup: ApiHost;

  beforeAll(async () => {
    setup = await startApiHost({ environmentId: ENV });
  });

  afterAll(async () => {
    await setup.host.close();
  });

  it('answers once a running process exits, with its exit code and when', async () => {
    const process = await startProcess(setup.api, ENV, { argv: ['sh', '-c', 'read line; exit 3'], pipeStdin: true });
    const waited = setup.api.post(waitPath(process.id));
    await openWaits(setup, 1);
    expectStatus(await setup.api.post(paths.stdin(ENV, process.id), { writeId: 'w1', data: b64('go\n') }), 200);
    const body = expectStatus(await waited, 200) as { exitCode: number; exitedAt: string | null };
    expect(body.exitCode).toBe(3);
    expect(typeof body.exitedAt).toBe('string');
    expect(Number.isNaN(Date.parse(body.exitedAt ?? ''))).toBe(false);
    await openWaits(setup, 0);
  });

  it('answers at once for a process that has exited', async () => {
    const process = await startProcess(setup.api, ENV, { argv: ['sh', '-c', 'exit 7'] });
    await finished(setup.api, ENV, process.id);
    const exit = expectStatus(await setup.api.post(waitPath(process.id)), 200) as { exitCode: number; exitedAt: string };
    expect(exit.exitCode).toBe(7);
    // The process resource carries the same times, in its list and alone.
    const listed = (expectStatus(await setup.api.get(paths.processes(ENV)), 200) as { processes: { id: string; startedAt: string; exitedAt: string }[] }).processes.find((p) => p.id === process.id);
    expect(listed?.exitedAt).toBe(exit.exitedAt);
    expect(Date.parse(listed?.startedAt ?? '')).toBeLessThanOrEqual(Date.parse(exit.exitedAt));
    expect(expectStatus(await setup.api.get(paths.process(ENV, process.id)), 200)).toMatchObject({ startedAt: listed?.startedAt, exitedAt: exit.exitedAt });
    expect(process.startedAt).toBe(listed?.startedAt);
  });

  it('answers 404 for no such process', async () => {
    expectProblem(await setup.api.post(waitPath('no-such-process')), 404, 'PROCESS_NOT_FOUND', setup.host.instanceId);
  });

  it('leaves nothing behind when the client goes away', async () => {
    const process = await startProcess(setup.api, ENV, { argv: ['sleep', '60'] });
    const controller = new AbortController();
    const gone = fetch(`${setup.host.url}${waitPath(process.id)}`, { method: 'POST', headers: { authorization: `Bearer ${setup.api.token ?? ''}` }, signal: controller.signal }).catch((error: unknown) => error);
    await openWaits(setup, 1);
    controller.abort();
    expect(await gone).toMatchObject({ name: 'AbortError' });
    await openWaits(setup, 0);
    await setup.api.post(paths.terminate(ENV, process.id));
  });
});

describe('operator API: wait while the host stops', () => {
  it('answers an open wait 503 with Retry-After', async () => {
    const setup = await startApiHost({ environmentId: 'wait-2' });
    const process = await startProcess(setup.api, 'wait-2', { argv: ['sleep', '60'] });
    const waited = setup.api.post(`${paths.process('wait-2', process.id)}/wait`);
    await openWaits(setup, 1);
    const closed = setup.host.close();
    const answer = await waited;
    const problem = expectProblem(answer, 503, 'CLOSED', setup.host.instanceId);
    expect(problem.detail).toMatch(/wait again/);
    expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await closed;
  });
});
