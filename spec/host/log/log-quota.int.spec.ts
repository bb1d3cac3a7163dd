/**
 * A 100 MB process under a 32 MiB quota (8 MiB segments): its log keeps the head (the first segment)
 * and the tail (the newest segments), and a reader gets exactly one `truncated` marker (reason `quota`)
 * between them whose counts are exact: the seqs it skips, and the bytes the process wrote less those
 * served. The head is the output's first bytes and the tail its last ones. HostClient decodes that
 * marker, its bytes included, from the SSE and from the binary stream alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, lastValueFrom, toArray } from 'rxjs';
import type { HostTruncatedEvent } from '../../../src/client';
import { HostClient } from '../../../src/client';
import { OPERATOR_TOKEN, startApiHost, startProcess } from '../api/api-host';
import type { ApiHost } from '../api/api-host';
import { paths, within } from '../api/api-client';
import { digestStream, expectedDigest, shell } from './log-stream-digest';

jest.setTimeout(90_000);

/** `seq 1 12500000`: 101.4 MB. */
const PRODUCER = 'seq 1 12500000';
const MIB = 1024 * 1024;

describe('a process past its quota', () => {
  let dataDir: string;
  let setup: ApiHost;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-log-quota-'));
    setup = await startApiHost({ environmentId: 'log-quota', host: { outputLog: { dataDir, quotaBytes: 32 * MIB, segmentBytes: 8 * MIB } } });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps its head and tail, with one exact quota marker between them', async () => {
    const expectedPromise = expectedDigest(PRODUCER);
    const { api, environmentId, host } = setup;
    const started = await startProcess(api, environmentId, { argv: ['/bin/sh', '-c', PRODUCER] });
    const url = `${host.url}${paths.events(environmentId, started.id)}`;
    // Live, from seq 0 as the process starts (at the log's pace), then once more after it closed.
    const live = await within(digestStream({ url, token: OPERATOR_TOKEN }), 60_000, 'the live read');
    const late = await within(digestStream({ url, token: OPERATOR_TOKEN }), 60_000, 'the late read');
    const expected = await expectedPromise;

    expect({ status: late.status, end: late.end, gaps: late.gaps, markers: late.markers.length, reason: late.markers[0]?.reason, last: late.last?.event, firstSeq: late.firstSeq }).toEqual({
      status: 200,
      end: 'end',
      gaps: [],
      markers: 1,
      reason: 'quota',
      last: 'closed',
      firstSeq: 1,
    });
    const marker = late.markers[0];
    const headBytes = late.markerAtBytes[0];
    if (marker === undefined || headBytes === undefined) throw new Error('no marker');
    // Exact counts: the seqs skipped, and the bytes written less those served.
    expect(marker).toEqual({
      reason: 'quota',
      fromSeq: marker.fromSeq,
      toSeq: marker.toSeq,
      nextSeq: marker.toSeq + 1,
      droppedEvents: marker.toSeq - marker.fromSeq + 1,
      droppedBytes: expected.bytes - late.stdoutBytes,
    });
    // The head is a whole first segment (within 8 MiB), the kept total within the quota plus the active segment.
    expect(headBytes).toBeGreaterThan(0);
    expect(headBytes).toBeLessThanOrEqual(8 * MIB);
    expect(late.stdoutBytes).toBeLessThanOrEqual(40 * MIB);
    expect(marker.droppedBytes).toBeGreaterThan(50 * MIB);
    // HostClient decodes the same marker, its bytes included, from the SSE and from the binary stream.
    const markersOf = (binaryEvents: boolean): Promise<HostTruncatedEvent[]> =>
      lastValueFrom(
        new HostClient({ url: host.url, token: OPERATOR_TOKEN, binaryEvents })
          .events$(environmentId, started.id)
          .pipe(filter((e): e is HostTruncatedEvent => e.type === 'truncated'), toArray()),
      );
    const decoded = { type: 'truncated', nextSeq: marker.nextSeq, droppedEvents: marker.droppedEvents, droppedBytes: expected.bytes - late.stdoutBytes, reason: 'quota' };
    expect(await within(markersOf(false), 60_000, 'the client read over SSE')).toEqual([decoded]);
    expect(await within(markersOf(true), 60_000, 'the client read over the binary stream')).toEqual([decoded]);
    // The head is the output's first bytes, the tail its last ones.
    const tailBytes = late.stdoutBytes - headBytes;
    const headAndTail = (await shell(`{ ${PRODUCER} | head -c ${headBytes}; ${PRODUCER} | tail -c ${tailBytes}; } | sha256sum`)).split(' ')[0];
    expect(late.sha256).toBe(headAndTail);

    // The live reader read while segments were dropped: everything it got is exact, any gaps are quota markers.
    expect({ status: live.status, end: live.end, gaps: live.gaps, reasons: [...new Set(live.markers.map((m) => m.reason))], last: live.last?.event, lastSeq: live.lastSeq }).toEqual({
      status: 200,
      end: 'end',
      gaps: [],
      reasons: live.markers.length === 0 ? [] : ['quota'],
      last: 'closed',
      lastSeq: late.lastSeq,
    });
    // Its markers never overlap what it got (no gaps above), and their bytes account for every byte: exactly
    // when each marker starts where a widening of the dropped range began, and at most one segment more per
    // marker when the reader was inside a segment the quota then dropped (it had read part of it).
    const accounted = live.stdoutBytes + live.markers.reduce((sum, m) => sum + m.droppedBytes, 0);
    expect(accounted).toBeGreaterThanOrEqual(expected.bytes);
    expect(accounted).toBeLessThanOrEqual(expected.bytes + live.markers.length * 8 * MIB);
  });
});
