/**
 * Fault injection on the operator API's event stream, against the real executor: 8 MiB of random bytes
 * at about 1 MiB/s read through a proxy that cuts the HTTP connection 10 times at seeded random byte
 * offsets (inside frames, chunk headers, response heads: wherever they fall); the reader resumes each
 * time with `Last-Event-ID`. The second spec also drops the executor's socket 3 times (it re-dials and
 * the library resumes). Every stdout byte must arrive exactly once, in order (sha256 of what the process
 * says it wrote), seqs contiguous without a duplicate, and the proxy's log must show each resume point
 * is the last seq delivered before the cut and the host sent nothing at or below it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAULT_SEED, mulberry32, randomInt } from '../../faults/fault-kit';
import type { SseProxy } from '../../support/sse-proxy';
import { startSseProxy } from '../../support/sse-proxy';
import type { SseEvent } from '../../support/sse-reader';
import { readToEnd } from '../../support/sse-reader';
import type { SseHost } from './sse-setup';
import { GroundTruth, connected, decode, reached, sha256, startSseHost } from './sse-setup';
import { trackForCleanup } from '../../support/executor';

jest.setTimeout(90_000);

const TOTAL_BYTES = 8 * 1024 * 1024;
const BLOCK_BYTES = 64 * 1024;
/** 64 KiB every 62.5 ms: 1 MiB/s, so 8 MiB take about 8 s plus fork overhead. */
const BLOCK_INTERVAL_S = 0.0625;
const CUTS = 10;
const DROPS = 3;
/** About what the 8 MiB make as SSE: base64 (4/3) plus frame and chunk framing. Cuts fall below it. */
const CUT_RANGE: readonly [number, number] = [16 * 1024, 10 * 1024 * 1024];

/** The process: paced random blocks, tee'd to a file whose sha256 it prints on stderr. */
const script = (work: string): string => {
  const sent = join(work, 'sent.bin');
  return `i=0; while [ $i -lt ${TOTAL_BYTES / BLOCK_BYTES} ]; do head -c ${BLOCK_BYTES} /dev/urandom; sleep ${BLOCK_INTERVAL_S}; i=$((i+1)); done | tee '${sent}'; sha256sum '${sent}' >&2`;
};

interface Outcome {
  readonly events: readonly SseEvent[];
  readonly truth: GroundTruth;
  readonly seconds: number;
}

describe(`operator API event stream through a cutting proxy [seed ${FAULT_SEED}]`, () => {
  let setup: SseHost;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-sse-cuts-'));
    setup = await startSseHost({ environmentId: 'sse-cuts' });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** Runs the stream through a fresh proxy with `cuts` cut offsets; `onStdout` sees the stdout bytes received so far. */
  async function run(proxy: SseProxy, offsets: readonly number[], onStdout: (bytes: number) => void): Promise<Outcome> {
    const started = Date.now();
    const { resource, process } = await setup.start(['/bin/sh', '-c', script(work)], work);
    const truth = new GroundTruth(process);
    proxy.cutAt(offsets);
    let stdoutBytes = 0;
    const transcript = await readToEnd({
      url: `${proxy.origin}${setup.eventsPath(resource.id)}`,
      token: setup.token,
      maxConnections: 40,
      onEvent: (event) => {
        if (event.event !== 'output') return;
        const decoded = decode(event);
        if (decoded.stream !== 'stdout' || decoded.chunk === undefined) return;
        stdoutBytes += decoded.chunk.byteLength;
        onStdout(stdoutBytes);
      },
    });
    await truth.done;
    return { events: transcript.events, truth, seconds: (Date.now() - started) / 1000 };
  }

  /** Everything the promise says: exact bytes, contiguous seqs, resume points equal to what was delivered. */
  function expectExactlyOnce(outcome: Outcome, proxy: SseProxy, context: string): void {
    const decoded = outcome.events.map(decode);
    expect({ markers: decoded.filter((e) => e.seq === undefined).map((e) => e.type), context }).toEqual({ markers: [], context });
    const seqs = decoded.map((e) => e.seq ?? -1);
    const firstBad = seqs.findIndex((seq, i) => seq !== i + 1);
    expect({ firstBad, context }).toEqual({ firstBad: -1, context });
    // The exit may come before the last output (the executor reads the pipe after it saw the exit); close is last.
    expect(decoded.filter((e) => e.type !== 'output').map((e) => (e.type === 'exited' ? `exited:${String(e.data['exitCode'])}` : e.type))).toEqual(['exited:0', 'closed']);
    expect(decoded.at(-1)?.type).toBe('closed');
    expect(outcome.truth.problems).toEqual([]);
    expect(seqs.length).toBe(outcome.truth.lastSeq);

    const stdout = Buffer.concat(decoded.filter((e) => e.stream === 'stdout').map((e) => e.chunk ?? Buffer.alloc(0)));
    const stderr = Buffer.concat(decoded.filter((e) => e.stream === 'stderr').map((e) => e.chunk ?? Buffer.alloc(0))).toString('utf8');
    expect(stdout.byteLength).toBe(TOTAL_BYTES);
    const [printed] = stderr.trim().split(/\s+/);
    expect(printed).toMatch(/^[0-9a-f]{64}$/);
    expect(sha256(stdout)).toBe(printed);
    expect(sha256(outcome.truth.stdout())).toBe(printed);

    // The proxy's log: each request resumed from the last seq the previous one delivered whole, and the
    // host sent nothing at or below it, nothing out of order.
    const log = proxy.log.map((r) => ({ resume: r.lastEventId, first: r.firstId, last: r.lastId, below: r.atOrBelowResume, gaps: r.notContiguous, status: r.status, complete: r.complete, end: r.end }));
    expect({ requests: log.length, cuts: proxy.cuts, context }).toEqual({ requests: CUTS + 1, cuts: CUTS, context });
    let delivered: number | undefined;
    for (const [i, request] of log.entries()) {
      expect({ i, resume: request.resume, context }).toEqual({ i, resume: delivered, context });
      expect({ i, below: request.below, gaps: request.gaps }).toEqual({ i, below: [], gaps: [] });
      delivered = request.last ?? delivered;
      // Every request but the last was cut; the last one's body the host ended (after `closed`).
      expect({ i, status: request.status, complete: request.complete, cut: request.end === 'cut' }).toEqual({ i, status: request.status === 0 ? 0 : 200, complete: i === CUTS, cut: i < CUTS });
    }
    expect(delivered).toBe(outcome.truth.lastSeq);
    // Random offsets land inside frames (a frame is about 11 KB): the reader must drop the partial one.
    expect(proxy.log.filter((r) => r.cutInsideFrame).length).toBeGreaterThan(0);
  }

  function cutOffsets(random: () => number): number[] {
    return Array.from({ length: CUTS }, () => randomInt(random, CUT_RANGE[0], CUT_RANGE[1])).sort((a, b) => a - b);
  }

  it(`delivers 8 MiB at ~1 MiB/s byte-exact across ${CUTS} cuts of the HTTP connection at random offsets [seed ${FAULT_SEED}]`, async () => {
    const random = mulberry32(FAULT_SEED);
    const offsets = cutOffsets(random);
    const proxy = trackForCleanup(await startSseProxy(Number(new URL(setup.origin).port)));
    const outcome = await run(proxy, offsets, () => undefined);
    expectExactlyOnce(outcome, proxy, `seed ${FAULT_SEED}, cuts at ${offsets.join(',')}`);
    expect(await setup.eventStreams()).toBe(0);
    expect(outcome.seconds).toBeLessThan(60);
  });

  it(`delivers 8 MiB byte-exact across ${CUTS} HTTP cuts and ${DROPS} drops of the executor's socket [seed ${FAULT_SEED}]`, async () => {
    const random = mulberry32(FAULT_SEED ^ 0x0d0d);
    const offsets = cutOffsets(random);
    // Drop i fires once the reader has about (i + 1 + jitter) / (DROPS + 2) of the stdout bytes.
    const thresholds = Array.from({ length: DROPS }, (_, i) => Math.floor((TOTAL_BYTES * (i + 1 + random() * 0.5)) / (DROPS + 2)));
    const context = `seed ${FAULT_SEED}, cuts at ${offsets.join(',')}, drops at ${thresholds.join(',')} stdout bytes`;
    const proxy = trackForCleanup(await startSseProxy(Number(new URL(setup.origin).port)));

    let dropsDone = 0;
    let dropping: Promise<void> = Promise.resolve();
    let nextDrop = 0;
    const onStdout = (bytes: number): void => {
      const threshold = thresholds[nextDrop];
      if (threshold === undefined || bytes < threshold) return;
      nextDrop += 1;
      dropping = dropping.then(async () => {
        const down = reached(setup.host, setup.environmentId, 'disconnected');
        expect(setup.host.dropSocket(setup.environmentId)).toBe(true);
        await down;
        await connected(setup.host, setup.environmentId);
        dropsDone += 1;
      });
    };
    const outcome = await run(proxy, offsets, onStdout);
    await dropping;
    expect({ dropsDone, context }).toEqual({ dropsDone: DROPS, context });
    expectExactlyOnce(outcome, proxy, context);
    expect(await setup.eventStreams()).toBe(0);
    expect(outcome.seconds).toBeLessThan(60);
  });
});
