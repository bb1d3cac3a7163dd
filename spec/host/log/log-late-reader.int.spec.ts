/**
 * A 200 MB process that closed long ago (the host's clock moved 23 hours on, within a 24-hour
 * retention, without waiting), read from seq 0 by a late subscriber: every byte from the log on disk,
 * sha256-exact, seqs contiguous, receipt times from before the jump; and a read from a random seq
 * (`?after=` and `Last-Event-ID`) gives exactly what follows it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { filter, map } from 'rxjs/operators';
import { FAULT_SEED, mulberry32, randomInt } from '../../faults/fault-kit';
import { listProcesses, OPERATOR_TOKEN, startApiHost, startProcess } from '../api/api-host';
import type { ApiHost } from '../api/api-host';
import { paths, within } from '../api/api-client';
import { digestStream, expectedDigest, OffsetClock } from './log-stream-digest';

jest.setTimeout(90_000);

/** `seq 1 23500000`: 199.9 MB, at least 24,400 events (the executor reads at most 8 KiB at a time). */
const PRODUCER = 'seq 1 23500000';
const HOUR = 3_600_000;

describe('a 200 MB process closed long ago', () => {
  let dataDir: string;
  let setup: ApiHost;
  const clock = new OffsetClock();
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-log-late-'));
    setup = await startApiHost({ environmentId: 'log-late', host: { scheduler: clock, outputLog: { dataDir, retentionMs: 24 * HOUR } } });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is served from seq 0, and from a random seq, exactly, to a late subscriber', async () => {
    const expectedPromise = expectedDigest(PRODUCER);
    const { api, environmentId, host } = setup;
    const started = await startProcess(api, environmentId, { argv: ['/bin/sh', '-c', PRODUCER] });
    const process = await firstValueFrom(
      host.environments$.pipe(
        map((list) => list.find((e) => e.id === environmentId)?.environment?.getProcess(started.id)),
        filter((p) => p !== undefined),
      ),
    );
    await within(firstValueFrom(process.state$.pipe(filter((state) => state === 'closed'))), 30_000, 'the process to close');
    const closedAt = clock.now();
    clock.offsetMs += 23 * HOUR;
    expect((await listProcesses(api, environmentId)).map((p) => p.id)).toContain(started.id);

    const random = mulberry32(FAULT_SEED);
    const afterQuery = randomInt(random, 1, 24_000);
    const afterHeader = randomInt(random, 12_000, 24_000);
    const url = `${host.url}${paths.events(environmentId, started.id)}`;
    const full = await within(digestStream({ url, token: OPERATOR_TOKEN, suffixAfter: [afterQuery, afterHeader] }), 60_000, 'the late read from seq 0');
    const expected = await expectedPromise;
    const seed = `seed ${FAULT_SEED}: after=${afterQuery}, Last-Event-ID ${afterHeader}`;
    expect({ seed, status: full.status, end: full.end, sha256: full.sha256, bytes: full.stdoutBytes, firstSeq: full.firstSeq, gaps: full.gaps, markers: full.markers, last: full.last?.event }).toEqual({
      seed,
      status: 200,
      end: 'end',
      sha256: expected.sha256,
      bytes: expected.bytes,
      firstSeq: 1,
      gaps: [],
      markers: [],
      last: 'closed',
    });
    // Received before the clock moved on.
    expect(Number(full.last?.data['time'])).toBeLessThanOrEqual(closedAt);
    expect(full.lastSeq ?? 0).toBeGreaterThan(24_000);

    const viaQuery = await within(digestStream({ url, token: OPERATOR_TOKEN, after: afterQuery }), 60_000, 'the read after a random seq');
    expect({ seed, firstSeq: viaQuery.firstSeq, lastSeq: viaQuery.lastSeq, gaps: viaQuery.gaps, markers: viaQuery.markers, sha256: viaQuery.sha256, bytes: viaQuery.stdoutBytes }).toEqual({
      seed,
      firstSeq: afterQuery + 1,
      lastSeq: full.lastSeq,
      gaps: [],
      markers: [],
      sha256: full.suffixes.get(afterQuery)?.sha256,
      bytes: full.suffixes.get(afterQuery)?.bytes,
    });

    const viaHeader = await within(digestStream({ url, token: OPERATOR_TOKEN, lastEventId: afterHeader }), 60_000, 'the read after Last-Event-ID');
    expect({ seed, firstSeq: viaHeader.firstSeq, gaps: viaHeader.gaps, markers: viaHeader.markers, sha256: viaHeader.sha256, bytes: viaHeader.stdoutBytes, last: viaHeader.last?.event }).toEqual({
      seed,
      firstSeq: afterHeader + 1,
      gaps: [],
      markers: [],
      sha256: full.suffixes.get(afterHeader)?.sha256,
      bytes: full.suffixes.get(afterHeader)?.bytes,
      last: 'closed',
    });
  });
});
