/**
 * A subscriber that reads nothing, against the real executor: its socket is paused (TCP flow control
 * pushes back to the host) while the process streams. The host must end that stream at its send-buffer
 * bound (here 256 KiB) with whole frames, while the other subscribers finish byte-exact and the process
 * runs at its own pace, finishing while the stalled subscriber still reads nothing. The stalled one then
 * gets what was buffered, the end of the body, and resumes by seq to exactly the rest.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SseTranscript } from '../../support/sse-reader';
import { openSse, readToEnd } from '../../support/sse-reader';
import type { SseHost } from './sse-setup';
import { GroundTruth, lineOf, sha256, startSseHost, waitForStreams, within } from './sse-setup';

jest.setTimeout(90_000);

/**
 * The host's per-stream bound. The readers share this jest worker's event loop with the host, so under
 * load a reader that reads everything still lags by what one stall of the loop lets through: at 256 KiB
 * (60 ms of this stream) clean-clone runs under load 10 cut a reading subscriber too. 1 MiB still cuts
 * the stalled one well before the end (the bound plus ~4 MiB the sockets hold, of 8 MiB).
 */
const BUFFER_BYTES = 1024 * 1024;
const BLOCK_BYTES = 64 * 1024;
/** 8 MiB: well past what the loopback sockets absorb of a stream nobody reads (about 4 MiB here). */
const BLOCKS = 128;
/** 64 KiB every 16 ms: about 4 MiB/s at most (forks slow it). */
const BLOCK_INTERVAL_S = 0.016;
const OTHERS = 5;

const digest = (lines: readonly string[]): { count: number; hash: string } => ({ count: lines.length, hash: sha256(Buffer.from(lines.join('\n'))) });

describe('a subscriber that reads nothing', () => {
  let setup: SseHost;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-sse-stalled-'));
    // The history holds all 8 MiB: the stalled subscriber is behind by the bound plus what the sockets
    // held (~4 MiB on loopback), more than the default 4 MiB history, and its resume is to be exact here.
    setup = await startSseHost({
      environmentId: 'sse-stalled',
      manager: { processHistory: { historyEvents: 16_384, historyBytes: 16 * 1024 * 1024 } },
      operator: { sse: { bufferBytes: BUFFER_BYTES } },
    });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** Starts the paced process (it waits for `go`), subscribes `others` readers, and lets it run. */
  async function run(name: string, stall: boolean): Promise<{ truth: GroundTruth; seconds: number; others: SseTranscript[]; stalled: Awaited<ReturnType<typeof openSse>> | undefined; url: string }> {
    const dir = join(work, name);
    // Made here, not by the process: `go` is written as soon as the streams are open, which may come
    // before the process has run its first command.
    mkdirSync(dir);
    const script = `cd '${dir}'; while [ ! -e go ]; do sleep 0.02; done; i=0; while [ $i -lt ${BLOCKS} ]; do head -c ${BLOCK_BYTES} /dev/urandom; sleep ${BLOCK_INTERVAL_S}; i=$((i+1)); done`;
    const { resource, process } = await setup.start(['/bin/sh', '-c', script], work);
    const truth = new GroundTruth(process);
    const url = `${setup.origin}${setup.eventsPath(resource.id)}`;
    const stalled = stall ? await openSse({ url, token: setup.token }) : undefined;
    stalled?.pause();
    const others = Array.from({ length: OTHERS }, () => readToEnd({ url, token: setup.token, maxConnections: 1 }));
    for (const other of others) other.catch(() => undefined);
    await waitForStreams(setup, OTHERS + (stall ? 1 : 0));
    const started = Date.now();
    writeFileSync(join(dir, 'go'), '');
    // The process must end while the stalled subscriber still reads nothing.
    await within(truth.done, 60_000, `${name}: the process to close`);
    const seconds = (Date.now() - started) / 1000;
    return { truth, seconds, others: await Promise.all(others), stalled, url };
  }

  it('is ended at the buffer bound with whole frames, while the others finish byte-exact and the process is not slowed', async () => {
    const baseline = await run('baseline', false);
    const { truth, seconds, others, stalled, url } = await run('stalled', true);
    if (stalled === undefined) throw new Error('no stalled subscriber');
    const timings = `process ${seconds} s with the stalled subscriber, ${baseline.seconds} s without`;

    expect(truth.problems).toEqual([]);
    expect(truth.stdout().byteLength).toBe(BLOCKS * BLOCK_BYTES);
    const everything = digest(truth.linesAfter(0));
    for (const [i, other] of others.entries()) {
      expect({ i, got: digest(other.events.map(lineOf)), connections: other.connections.map((c) => `${c.status}:${c.end}:${c.partialBytes}`) }).toEqual({ i, got: everything, connections: ['200:end:0'] });
    }
    // Not bounded by the stalled subscriber: it finished while that one read nothing, about as fast as without it.
    expect({ seconds: seconds <= baseline.seconds * 2 + 2, timings }).toEqual({ seconds: true, timings });

    // The host ended the stalled stream (it holds none now), though its socket was never read.
    expect(await setup.eventStreams()).toBe(0);
    stalled.resume();
    expect(await within(stalled.ended, 10_000, 'the stalled stream to end')).toBe('end');
    expect(stalled.partialBytes).toBe(0);
    const got = stalled.events.map(lineOf);
    const k = stalled.events.at(-1)?.id ?? 0;
    expect(stalled.events.map((e) => e.id)).toEqual(Array.from({ length: k }, (_, i) => i + 1));
    expect(digest(got)).toEqual(digest(truth.linesAfter(0).slice(0, k)));
    // Cut well before the end: the bound plus what the sockets held, of 8 MiB (10.7 MiB as frames).
    expect({ k, before: k < truth.lastSeq - 100, bytes: stalled.bodyBytes }).toEqual({ k, before: true, bytes: stalled.bodyBytes });

    // It resumes by seq to exactly the rest.
    const rest = await readToEnd({ url, token: setup.token, after: k, maxConnections: 1 });
    expect(digest(rest.events.map(lineOf))).toEqual(digest(truth.linesAfter(k)));
    expect(await setup.eventStreams()).toBe(0);
  });
});
