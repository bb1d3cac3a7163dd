/**
 * HostClient.events$ across a host restart that lost the process (no Redis), against a real host and
 * the real executor: the host is closed mid-stream and a NEW host (another instance id, which never
 * heard of the process) starts on the SAME port. The stream must fail with PROCESS_GONE, naming the new
 * instance, within 10 s of the new host being reachable, whether the restart is quick or the client is
 * waiting between retries when it happens; it must never hang (every wait here is bounded).
 */
import { HostApiError } from '../../src/client';
import type { HostServer } from '../../src/host/host-options';
import type { ApiHost } from './client-setup';
import { countingFetch, environmentReady, EXECUTOR_CREDENTIALS, hostClient, PATH_ENV, portOf, startApiHost, startHostOnPort, Transcript, within } from './client-setup';
import { startDirectExecutor, trackForCleanup } from '../support/executor';
import type { SseProxy } from '../support/sse-proxy';
import { startSseProxy } from '../support/sse-proxy';

jest.setTimeout(60_000);

/** The bound the client promises, from the new host being reachable to PROCESS_GONE. */
const GONE_WITHIN_MS = 10_000;
/** A process that ticks for 60 s: it outlives every spec here (the executor's stop ends it). */
const TICKS = ['/bin/sh', '-c', 'i=0; while [ $i -lt 600 ]; do echo tick $i; sleep 0.1; i=$((i+1)); done'];

/** A host and its executor, one ticking process, and events$ on it (through a proxy when asked) once five ticks came. */
async function ticking(environmentId: string, viaProxy = false): Promise<{ readonly setup: ApiHost; readonly transcript: Transcript; readonly counting: ReturnType<typeof countingFetch>; readonly proxy: SseProxy | undefined }> {
  const setup = await startApiHost({ environmentId });
  const { id } = await hostClient(setup.host.url).start(environmentId, { argv: TICKS, cwd: '/tmp', env: PATH_ENV });
  const proxy = viaProxy ? trackForCleanup(await startSseProxy(portOf(setup.host.url))) : undefined;
  const counting = countingFetch();
  const transcript = new Transcript(hostClient(proxy?.origin ?? setup.host.url, { fetch: counting.fetch }).events$(environmentId, id));
  await within(transcript.when(() => transcript.lastSeq >= 5), 10_000, 'five ticks');
  return { setup, transcript, counting, proxy };
}

/** Expects `transcript` to end with PROCESS_GONE from `newHost` within the bound after `reachableAt`. */
async function expectGone(transcript: Transcript, oldHost: HostServer, newHost: HostServer, reachableAt: number): Promise<number> {
  const error = await within(transcript.done, GONE_WITHIN_MS + 5_000, 'end of the stream after the restart');
  const elapsed = (transcript.endedAt ?? Number.POSITIVE_INFINITY) - reachableAt;
  expect(error).toBeInstanceOf(HostApiError);
  expect(error).toMatchObject({ code: 'PROCESS_GONE', status: 404, hostInstance: newHost.instanceId, message: expect.stringContaining(oldHost.instanceId) });
  expect(newHost.instanceId).not.toBe(oldHost.instanceId);
  expect(elapsed).toBeLessThan(GONE_WITHIN_MS);
  // What came before the restart is still in order.
  expect(transcript.events.every((e, i) => e.type === 'output' && e.seq === i + 1)).toBe(true);
  return elapsed;
}

describe('HostClient.events$ across a host restart that lost the process', () => {
  it('fails PROCESS_GONE within 10 s when the host is replaced at once on the same port', async () => {
    const { setup, transcript } = await ticking('client-restart-quick');
    const oldHost = setup.host;
    await oldHost.close();
    const newHost = await startHostOnPort(portOf(oldHost.url));
    const reachableAt = performance.now();
    const elapsed = await expectGone(transcript, oldHost, newHost, reachableAt);
    const cause = (((await transcript.done) as HostApiError).cause as HostApiError | undefined)?.code;
    globalThis.process.stdout.write(`client restart (at once, the new host answered ${cause ?? '?'}): PROCESS_GONE ${elapsed.toFixed(0)} ms after the new host listened\n`);
  });

  it('fails PROCESS_GONE within 10 s when the host comes back while the client waits between retries', async () => {
    const { setup, transcript, counting } = await ticking('client-restart-between');
    const oldHost = setup.host;
    await oldHost.close();
    // Down long enough for the backoff to grow: at least 4 refused attempts (waits of up to 0.2, 0.4, 0.8 s, then up to 1.6 s).
    await within(counting.failed(4), 15_000, 'four refused attempts');
    const attempts = counting.attempts();
    const newHost = await startHostOnPort(portOf(oldHost.url));
    const reachableAt = performance.now();
    // It was between retries: no attempt was under way when the new host came up.
    expect(counting.attempts()).toBe(counting.failures() + 1);
    const elapsed = await expectGone(transcript, oldHost, newHost, reachableAt);
    expect(counting.attempts()).toBeGreaterThan(attempts);
    globalThis.process.stdout.write(`client restart (between retries, after ${counting.failures()} refused attempts): PROCESS_GONE ${elapsed.toFixed(0)} ms after the new host listened\n`);
  });

  it('fails PROCESS_GONE within 10 s when the host is restarted behind a proxy that refused meanwhile, an executor joined to the new host', async () => {
    const { setup, transcript, counting, proxy } = await ticking('client-restart-proxied', true);
    if (proxy === undefined) throw new Error('no proxy');
    await proxy.refuse('reset');
    await within(counting.failed(3), 15_000, 'three reset attempts');
    const oldHost = setup.host;
    await oldHost.close();
    const newHost = await startHostOnPort(portOf(oldHost.url));
    // An executor joins the new host under the same environment id: the new host knows the environment
    // but not the process. Only then does the proxy let the client through.
    const joined = environmentReady(newHost, setup.environmentId);
    await startDirectExecutor({ remoteUrl: newHost.url, environmentId: setup.environmentId, credentials: EXECUTOR_CREDENTIALS });
    await within(joined, 30_000, 'an executor joining the new host');
    await proxy.accept();
    const reachableAt = performance.now();
    const elapsed = await expectGone(transcript, oldHost, newHost, reachableAt);
    expect(((await transcript.done) as HostApiError).cause).toMatchObject({ code: 'PROCESS_NOT_FOUND', status: 404 });
    globalThis.process.stdout.write(`client restart (behind a refusing proxy, an executor joined): PROCESS_GONE ${elapsed.toFixed(0)} ms after the proxy let it through\n`);
  });
});
