/**
 * HostClient.events$ against a real host and the real executor, through a proxy that cuts the HTTP
 * connection 10 times at seeded random byte offsets (inside frames, chunk headers, response heads),
 * while the host also loses the executor's socket 3 times: 8 MiB of random bytes at about 1 MiB/s must
 * come out of the Observable exactly once, in order (sha256 of what the process says it wrote), seqs
 * contiguous, and each reconnect must resume after the last seq the client had emitted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiHost } from './client-setup';
import { connected, expectWhole, GroundTruth, hostClient, pacedScript, PATH_ENV, portOf, reached, startApiHost, Transcript } from './client-setup';
import { FAULT_SEED, mulberry32, randomInt } from '../faults/fault-kit';
import { trackForCleanup } from '../support/executor';
import { startSseProxy } from '../support/sse-proxy';

jest.setTimeout(90_000);

const TOTAL_BYTES = 8 * 1024 * 1024;
const CUTS = 10;
const DROPS = 3;
/** About what the 8 MiB make as SSE (base64 plus framing): the cuts fall below it. */
const CUT_RANGE: readonly [number, number] = [16 * 1024, 10 * 1024 * 1024];

describe(`HostClient.events$ through HTTP cuts and executor drops [seed ${FAULT_SEED}]`, () => {
  let setup: ApiHost;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-client-cuts-'));
    setup = await startApiHost({ environmentId: 'client-cuts' });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it(`delivers 8 MiB at ~1 MiB/s sha256-exact across ${CUTS} HTTP cuts at random offsets and ${DROPS} executor socket drops [seed ${FAULT_SEED}]`, async () => {
    const random = mulberry32(FAULT_SEED ^ 0xc11e);
    const offsets = Array.from({ length: CUTS }, () => randomInt(random, CUT_RANGE[0], CUT_RANGE[1])).sort((a, b) => a - b);
    // Drop i fires once the client has about (i + 1 + jitter) / (DROPS + 2) of the stdout bytes.
    const thresholds = Array.from({ length: DROPS }, (_, i) => Math.floor((TOTAL_BYTES * (i + 1 + random() * 0.5)) / (DROPS + 2)));
    const context = `seed ${FAULT_SEED}, cuts at ${offsets.join(',')}, drops at ${thresholds.join(',')} stdout bytes`;
    const { host, environmentId } = setup;
    const proxy = trackForCleanup(await startSseProxy(portOf(host.url)));
    const direct = hostClient(host.url);
    const proxied = hostClient(proxy.origin);
    const started = performance.now();

    const resource = await direct.start(environmentId, { argv: ['/bin/sh', '-c', pacedScript(work, TOTAL_BYTES)], cwd: work, env: PATH_ENV });
    const process = (await connected(host, environmentId)).getProcess(resource.id);
    if (process === undefined) throw new Error(`process ${resource.id} is not listed`);
    const truth = new GroundTruth(process);
    proxy.cutAt(offsets);

    // The last seq the client had emitted when the proxy had seen n requests: request n + 1 must resume after it.
    const hadAtRequests = new Map<number, number>();
    let dropsDone = 0;
    let nextDrop = 0;
    let dropping: Promise<void> = Promise.resolve();
    const transcript = new Transcript(proxied.events$(environmentId, resource.id), (event, t) => {
      if (event.type !== 'truncated') hadAtRequests.set(proxy.log.length, event.seq);
      const threshold = thresholds[nextDrop];
      if (threshold === undefined || t.stdoutBytes < threshold) return;
      nextDrop += 1;
      dropping = dropping.then(async () => {
        const down = reached(host, environmentId, 'disconnected');
        expect(host.dropSocket(environmentId)).toBe(true);
        await down;
        await connected(host, environmentId);
        dropsDone += 1;
      });
    });
    expect(await transcript.done).toBeUndefined();
    await truth.done;
    await dropping;
    const seconds = (performance.now() - started) / 1000;

    expect({ dropsDone, context }).toEqual({ dropsDone: DROPS, context });
    expectWhole(transcript, truth, TOTAL_BYTES, context);

    // The proxy's log: one request per connection, each resuming after the last seq the client had
    // emitted before it, which is the last the previous connections delivered whole (the client loses no
    // whole frame to a cut), the host sending nothing at or below it and nothing out of order.
    expect({ requests: proxy.log.length, cuts: proxy.cuts, context }).toEqual({ requests: CUTS + 1, cuts: CUTS, context });
    let had = 0;
    let deliveredWhole = 0;
    for (const [i, request] of proxy.log.entries()) {
      had = Math.max(had, ...[...hadAtRequests].filter(([n]) => n <= i).map(([, seq]) => seq));
      expect({ i, path: request.path, after: request.after, context }).toEqual({ i, path: `/api/v1/environments/${environmentId}/processes/${resource.id}/events`, after: had, context });
      expect({ i, after: request.after, deliveredWhole }).toEqual({ i, after: deliveredWhole, deliveredWhole });
      expect({ i, below: request.atOrBelowResume, gaps: request.notContiguous, reused: request.bytesAfterRequest }).toEqual({ i, below: [], gaps: [], reused: 0 });
      expect({ i, status: request.status, complete: request.complete, cut: request.end === 'cut' }).toEqual({ i, status: request.status === 0 ? 0 : 200, complete: i === CUTS, cut: i < CUTS });
      deliveredWhole = request.lastId ?? deliveredWhole;
    }
    expect(deliveredWhole).toBe(truth.lastSeq);
    // Random offsets land inside frames (a frame is about 11 KB): the client must drop the partial one.
    expect(proxy.log.filter((r) => r.cutInsideFrame).length).toBeGreaterThan(0);
    expect((await setup.api.get('/api/v1/host')).body).toMatchObject({ eventStreams: 0 });
    expect(seconds).toBeLessThan(60);
    globalThis.process.stdout.write(`client cuts: ${seconds.toFixed(1)} s, ${proxy.log.length} requests, resumes after ${proxy.log.map((r) => r.after).join(',')} (whole before each cut: ${proxy.log.map((r) => r.lastId).join(',')})\n`);
  });
});
