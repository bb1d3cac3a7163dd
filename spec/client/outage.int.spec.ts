/**
 * HostClient.events$ while the host is unreachable, against a real host and the real executor: the
 * proxy in front of the host plays a host that is down (it stops listening: connections are refused; or
 * it resets each one) for 5 s mid-stream, then lets connections through again. With the default
 * maxOfflineMs (90 s) the stream waits it out and the output comes out whole; with maxOfflineMs 2 s the
 * same outage fails the stream with HOST_UNREACHABLE, in bounded time.
 *
 * Whole means: as whole as the host holds it. At 1 MiB/s an outage of 5 s (plus the backoff delay
 * before the client is back) is over the host's default history per process (1 MiB, 256 events), so the
 * host here keeps 32 MiB; a host with the defaults is also run, and there the client must say what it
 * lost with a `truncated` marker, exactly where it lost it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostApiError } from '../../src/client';
import { DEFAULT_RETRY_POLICY } from '../../src/client';
import { DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_EVENTS } from '../../src/exec/event-history';
import type { ApiHost } from './client-setup';
import { connected, countingFetch, expectWhole, GroundTruth, hostClient, pacedScript, PATH_ENV, portOf, startApiHost, Transcript, within } from './client-setup';
import { holdOutage } from '../faults/fault-kit';
import { trackForCleanup } from '../support/executor';
import { startSseProxy } from '../support/sse-proxy';

jest.setTimeout(90_000);

const TOTAL_BYTES = 8 * 1024 * 1024;
const OUTAGE_MS = 5_000;

describe('HostClient.events$ with the host unreachable mid-stream', () => {
  let setup: ApiHost;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-client-outage-'));
    setup = await startApiHost({ environmentId: 'client-outage', host: { manager: { processHistory: { historyBytes: 32 * 1024 * 1024, historyEvents: 16_384 } } } });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  async function startPaced(on: ApiHost = setup): Promise<{ readonly id: string; readonly truth: GroundTruth }> {
    const resource = await hostClient(on.host.url).start(on.environmentId, { argv: ['/bin/sh', '-c', pacedScript(work, TOTAL_BYTES)], cwd: work, env: PATH_ENV });
    const process = (await connected(on.host, on.environmentId)).getProcess(resource.id);
    if (process === undefined) throw new Error(`process ${resource.id} is not listed`);
    return { id: resource.id, truth: new GroundTruth(process) };
  }

  it('waits out 5 s of refused connections (the proxy stops listening), then delivers 8 MiB whole', async () => {
    const proxy = trackForCleanup(await startSseProxy(portOf(setup.host.url)));
    const counting = countingFetch();
    const started = performance.now();
    const { id, truth } = await startPaced();
    const transcript = new Transcript(hostClient(proxy.origin, { fetch: counting.fetch }).events$(setup.environmentId, id));
    await transcript.when(() => transcript.stdoutBytes >= 2 * 1024 * 1024);

    await proxy.refuse('unlisten');
    const hadAtOutage = transcript.lastSeq;
    const requestsAtOutage = proxy.log.length;
    await holdOutage(OUTAGE_MS);
    const stdoutDuringOutage = transcript.stdoutBytes;
    // It kept trying, with backoff: several refused attempts, not a tight loop.
    const failed = counting.failures();
    await proxy.accept();
    const back = performance.now();
    const resumed = proxy.log.length + 1;
    await transcript.when(() => proxy.log.length >= resumed && transcript.stdoutBytes > stdoutDuringOutage);
    const resumedAfterMs = performance.now() - back;
    expect(await transcript.done).toBeUndefined();
    await truth.done;

    expectWhole(transcript, truth, TOTAL_BYTES, `outage of ${OUTAGE_MS} ms`);
    expect(failed).toBeGreaterThanOrEqual(3);
    expect(failed).toBeLessThan(40);
    // Nothing got through while the proxy refused; the first request after it resumed where the client
    // was: at or past what the subscriber had when the proxy dropped the stream (events already in the
    // client's buffers are still delivered after the drop; a clean-clone run under load saw 330 for 305),
    // and no event at or below its `after` came again, none skipped (the checks below, and expectWhole).
    expect(proxy.log[requestsAtOutage]?.after).toBeGreaterThanOrEqual(hadAtOutage);
    for (const request of proxy.log) expect({ below: request.atOrBelowResume, gaps: request.notContiguous, reused: request.bytesAfterRequest }).toEqual({ below: [], gaps: [], reused: 0 });
    // Back within one (capped) backoff delay of the host coming back.
    expect(resumedAfterMs).toBeLessThan(DEFAULT_RETRY_POLICY.maxDelayMs + 1_000);
    expect((await setup.api.get('/api/v1/host')).body).toMatchObject({ eventStreams: 0 });
    const seconds = (performance.now() - started) / 1000;
    globalThis.process.stdout.write(`client outage: ${seconds.toFixed(1)} s, ${failed} refused attempts, resumed ${resumedAfterMs.toFixed(0)} ms after the host came back\n`);
  });

  it('fails HOST_UNREACHABLE in bounded time when the outage outlasts maxOfflineMs (2 s; connections reset)', async () => {
    const maxOfflineMs = 2_000;
    const proxy = trackForCleanup(await startSseProxy(portOf(setup.host.url)));
    const { id, truth } = await startPaced();
    const transcript = new Transcript(hostClient(proxy.origin, { retry: { maxOfflineMs } }).events$(setup.environmentId, id));
    await transcript.when(() => transcript.stdoutBytes >= 1024 * 1024);

    await proxy.refuse('reset');
    const down = performance.now();
    const error = await within(transcript.done, maxOfflineMs + DEFAULT_RETRY_POLICY.maxDelayMs + 5_000, 'HOST_UNREACHABLE');
    const failedAfterMs = (transcript.endedAt ?? 0) - down;
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'HOST_UNREACHABLE', message: expect.stringContaining('for over 2 s') });
    expect(failedAfterMs).toBeGreaterThanOrEqual(maxOfflineMs);
    // At most one (capped) backoff delay past the bound.
    expect(failedAfterMs).toBeLessThan(maxOfflineMs + DEFAULT_RETRY_POLICY.maxDelayMs + 1_000);
    expect(proxy.refused).toBeGreaterThanOrEqual(3);
    // What it emitted before is still in order.
    expect(transcript.events.every((e, i) => e.type !== 'truncated' && e.seq === i + 1)).toBe(true);

    await proxy.accept();
    expect(await hostClient(setup.host.url).terminate(setup.environmentId, id)).toBe(true);
    await truth.done;
    globalThis.process.stdout.write(`client unreachable: HOST_UNREACHABLE ${failedAfterMs.toFixed(0)} ms after the host went down (maxOfflineMs ${maxOfflineMs}), ${proxy.refused} resets\n`);
  });

  it('past what a host with the default history holds, says what it lost with one truncated marker, exactly there', async () => {
    const short = await startApiHost({ environmentId: 'client-outage-default-history' });
    const proxy = trackForCleanup(await startSseProxy(portOf(short.host.url)));
    const { id, truth } = await startPaced(short);
    const transcript = new Transcript(hostClient(proxy.origin).events$(short.environmentId, id));
    await transcript.when(() => transcript.stdoutBytes >= 1024 * 1024);
    await proxy.refuse('unlisten');
    await holdOutage(OUTAGE_MS);
    // The outage lasts until the host's history has moved past what the client has, by the process's
    // own output, not by its nominal pace: a paced process on a loaded machine (a clean-clone CI run)
    // wrote less than the default history holds in 5 s, the client resumed inside it and no marker came.
    // The history keeps at most so many bytes and so many events: past either (by a block of bytes) the
    // client's next event is gone from it.
    const pastHistory = (): boolean =>
      truth.stdoutBytes >= transcript.stdoutBytes + DEFAULT_HISTORY_BYTES + 64 * 1024 || truth.lastSeq > transcript.lastSeq + DEFAULT_HISTORY_EVENTS;
    await within(truth.when(pastHistory), 60_000, 'the host past its default history while the client is cut off');
    await proxy.accept();
    expect(await transcript.done).toBeUndefined();
    await truth.done;

    const markers = transcript.events.flatMap((e, i) => (e.type === 'truncated' ? [{ i, marker: e }] : []));
    expect(markers).toHaveLength(1);
    const [{ i, marker } = { i: -1, marker: undefined }] = markers;
    const before = transcript.events.slice(0, i);
    const after = transcript.events.slice(i + 1);
    expect(before.map((e) => (e.type === 'truncated' ? -1 : e.seq))).toEqual(before.map((_, n) => n + 1));
    expect(after.map((e) => (e.type === 'truncated' ? -1 : e.seq))).toEqual(after.map((_, n) => (marker?.nextSeq ?? 0) + n));
    expect(marker?.droppedEvents).toBe((marker?.nextSeq ?? 0) - 1 - before.length);
    expect(after.at(-1)).toEqual({ type: 'closed', seq: truth.lastSeq });
    // What it did deliver is exact, on both sides of the hole.
    const stdout = (events: typeof before): Buffer => Buffer.concat(events.flatMap((e) => (e.type === 'output' && e.stream === 'stdout' ? [e.chunk] : [])));
    expect(stdout(before).equals(truth.stdout(0, before.length))).toBe(true);
    expect(stdout(after).equals(truth.stdout((marker?.nextSeq ?? 0) - 1))).toBe(true);
    globalThis.process.stdout.write(`client outage past the default history: truncated at ${before.length}, ${marker?.droppedEvents ?? 0} events dropped\n`);
  });
});
