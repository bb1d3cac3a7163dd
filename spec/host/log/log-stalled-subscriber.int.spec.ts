/**
 * Ten SSE subscribers of one process whose output (about 20 MB, 27 MB as frames: far more than the
 * loopback sockets absorb) is kept in the host's log on disk: nine read at full speed, one reads
 * nothing (its response paused: TCP flow control pushes back to the host) until the nine finished.
 * The host never cuts it: it then drains, in the same connection, every byte (sha256-exact) with
 * contiguous seqs, as the nine did.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { expectStatus, OPERATOR_TOKEN, startApiHost, startProcess } from '../api/api-host';
import type { ApiHost } from '../api/api-host';
import { paths, within } from '../api/api-client';
import type { StreamDigest } from './log-stream-digest';
import { digestStream, expectedDigest } from './log-stream-digest';

jest.setTimeout(90_000);

/** `seq 1 2600000`: 19.7 MB. */
const PRODUCER = 'seq 1 2600000';
const READERS = 9;

describe('ten subscribers of a logged process, one of them stalled', () => {
  let dataDir: string;
  let setup: ApiHost;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-log-stalled-'));
    setup = await startApiHost({ environmentId: 'log-stalled', host: { outputLog: { dataDir } }, operator: { requestsPerSecond: 1000, requestBurst: 2000 } });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves the nine at full speed, holds the stalled one without cutting it, and then gives it everything', async () => {
    const expected = await expectedDigest(PRODUCER);
    const { api, environmentId, host } = setup;
    const started = await startProcess(api, environmentId, { argv: ['/bin/sh', '-c', PRODUCER] });
    const url = `${host.url}${paths.events(environmentId, started.id)}`;
    const order: string[] = [];

    let stalledResponse: IncomingMessage | undefined;
    let stalledEvents = 0;
    const stalled = digestStream({
      url,
      token: OPERATOR_TOKEN,
      onResponse: (res) => {
        res.pause();
        stalledResponse = res;
      },
      onEvent: () => {
        if (stalledEvents++ === 0) order.push('stalled:first-event');
      },
    });
    const readers = Array.from({ length: READERS }, (_, i) =>
      digestStream({ url, token: OPERATOR_TOKEN }).then((digest) => {
        order.push(`reader${i}:done`);
        return digest;
      }),
    );
    const nine = await within(Promise.all(readers), 60_000, 'the nine readers to finish');
    // The stalled stream is still open at the host: it was not cut.
    const facts = expectStatus(await api.get(paths.host), 200) as { eventStreams: number };
    expect({ eventStreams: facts.eventStreams, stalledEvents }).toEqual({ eventStreams: 1, stalledEvents: 0 });
    if (stalledResponse === undefined) throw new Error('the stalled subscriber got no response head');
    order.push('stalled:resumed');
    stalledResponse.resume();
    const late = await within(stalled, 60_000, 'the stalled reader to drain');

    const summary = (digest: StreamDigest): unknown => ({
      status: digest.status,
      end: digest.end,
      sha256: digest.sha256,
      bytes: digest.stdoutBytes,
      firstSeq: digest.firstSeq,
      gaps: digest.gaps,
      markers: digest.markers,
      last: digest.last?.event,
    });
    const everything = { status: 200, end: 'end', sha256: expected.sha256, bytes: expected.bytes, firstSeq: 1, gaps: [], markers: [], last: 'closed' };
    for (const [i, digest] of nine.entries()) expect({ i, got: summary(digest) }).toEqual({ i, got: everything });
    expect(summary(late)).toEqual(everything);
    expect(late.lastSeq).toBe(nine[0]?.lastSeq);
    // The nine finished before the stalled one read anything or was resumed.
    const stalledAt = order.indexOf('stalled:resumed');
    expect(order.indexOf('stalled:first-event')).toBeGreaterThan(stalledAt);
    expect(order.slice(0, stalledAt).sort()).toEqual(Array.from({ length: READERS }, (_, i) => `reader${i}:done`).sort());
  });
});
