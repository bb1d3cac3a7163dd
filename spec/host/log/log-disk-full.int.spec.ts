/**
 * A full disk under the host's data dir: an 8 MiB tmpfs (mounted here, as root: the spec fails when it
 * cannot mount, it never skips) holding the data dir and 4 MiB of ballast. A process that writes 20 MB
 * fills it: its stream gives what was written (a prefix of its output, exact), a `truncated` marker with
 * reason `writeFailed`, then `failed` with LOG_WRITE_FAILED; the host logs an `output log:` line and
 * stays up. Then the ballast goes (an operator freeing space): the failed log's files stay, and a new
 * process in the same environment and one in another environment each stream exactly, from the log.
 *
 * (Why the ballast: a host has one store, so every process's log is on the same full disk; while it is
 * full, any new log fails the same way. Freeing room shows that one log's failure leaves the host and
 * the store working for the next processes.)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { filter, map } from 'rxjs/operators';
import { startDirectExecutor } from '../../support/executor';
import { environmentReady, EXECUTOR_CREDENTIALS, OPERATOR_TOKEN, startApiHost, startProcess } from '../api/api-host';
import type { ApiHost } from '../api/api-host';
import { paths, within } from '../api/api-client';
import { digestStream, expectedDigest, shell } from './log-stream-digest';

jest.setTimeout(90_000);

/** 19.7 MB: more than the 8 MiB file system holds. */
const BIG = 'seq 1 2600000';
/** 0.9 MB: fits once the ballast is gone. */
const SMALL = 'seq 1 150000';
const MIB = 1024 * 1024;

describe('a data dir on a full disk', () => {
  let mountPoint: string;
  let mounted = false;
  let setup: ApiHost | undefined;

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('this spec mounts a tmpfs: run it as root');
    mountPoint = mkdtempSync(join(tmpdir(), 'exec-rx-log-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint]);
    mounted = true;
    writeFileSync(join(mountPoint, 'ballast'), Buffer.alloc(4 * MIB, 1));
    const dataDir = join(mountPoint, 'data');
    mkdirSync(dataDir);
    // The total bound past the file system's size: the disk, not the store's bound, is what stops the log.
    setup = await startApiHost({ environmentId: 'log-full', host: { outputLog: { dataDir, totalBytes: 1024 * MIB, segmentBytes: MIB } } });
  });
  afterAll(async () => {
    // The host first (its logs closed), then the file system under it.
    await setup?.host.close();
    if (mounted) execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it('fails the stream of the process that filled it, typed, and keeps the host serving the next ones', async () => {
    if (setup === undefined) throw new Error('no host');
    const { api, environmentId, host, log } = setup;
    const started = await startProcess(api, environmentId, { argv: ['/bin/sh', '-c', BIG] });
    const failed = await within(digestStream({ url: `${host.url}${paths.events(environmentId, started.id)}`, token: OPERATOR_TOKEN }), 60_000, 'the failing stream');
    // Live, the marker comes only when the log had already counted events as lost when this reader
    // caught up with it (a reader that was level with the log when the write failed gets `failed` alone:
    // nothing was known lost yet). The late read below always has it.
    expect({ status: failed.status, end: failed.end, gaps: failed.gaps, firstSeq: failed.firstSeq, markers: failed.markers.length <= 1, reasons: [...new Set(failed.markers.map((m) => m.reason))], last: failed.last?.event, code: failed.last?.data['code'] }).toEqual({
      status: 200,
      end: 'end',
      gaps: [],
      firstSeq: 1,
      markers: true,
      reasons: failed.markers.length === 0 ? [] : ['writeFailed'],
      last: 'failed',
      code: 'LOG_WRITE_FAILED',
    });
    const marker = failed.markers.at(-1);
    if (marker !== undefined) expect(marker.fromSeq).toBe((failed.lastSeq ?? 0) + 1);
    // The process itself runs to its end (the executor is not failed by the host's disk).
    const process = await firstValueFrom(
      host.environments$.pipe(
        map((list) => list.find((e) => e.id === environmentId)?.environment?.getProcess(started.id)),
        filter((p) => p !== undefined),
      ),
    );
    await within(firstValueFrom(process.state$.pipe(filter((state) => state === 'closed'))), 30_000, 'the process to close');
    const closedSeq = process.lastPublishedSeq;
    // What it served is the output's first bytes, exactly, and less than the whole (a live reader may
    // get more than the disk took: the log serves what it has not written yet from memory).
    const whole = await expectedDigest(BIG);
    expect(failed.stdoutBytes).toBeLessThan(whole.bytes);
    expect(failed.sha256).toBe((await expectedDigest(BIG, `head -c ${failed.stdoutBytes}`)).sha256);
    // A late reader gets what the log holds (what the disk took, at most the 4 MiB that were free, and
    // what it had taken but not written when the write failed, kept in memory: at most its 8 MiB high
    // mark), then the marker and the failure.
    const late = await within(digestStream({ url: `${host.url}${paths.events(environmentId, started.id)}`, token: OPERATOR_TOKEN }), 30_000, 'the late read');
    expect({ status: late.status, end: late.end, gaps: late.gaps, firstSeq: late.firstSeq, reasons: late.markers.map((m) => m.reason), last: late.last?.event, code: late.last?.data['code'] }).toEqual({
      status: 200,
      end: 'end',
      gaps: [],
      firstSeq: 1,
      reasons: ['writeFailed'],
      last: 'failed',
      code: 'LOG_WRITE_FAILED',
    });
    expect(late.stdoutBytes).toBeLessThanOrEqual(12 * MIB);
    // Its marker is exact: every seq after what the disk holds, to the process's `closed`, and every byte not served.
    const lateMarker = late.markers[0];
    expect(lateMarker).toEqual({
      reason: 'writeFailed',
      fromSeq: (late.lastSeq ?? 0) + 1,
      toSeq: closedSeq,
      nextSeq: closedSeq + 1,
      droppedEvents: closedSeq - (late.lastSeq ?? 0),
      droppedBytes: whole.bytes - late.stdoutBytes,
    });
    expect(late.sha256).toBe((await expectedDigest(BIG, `head -c ${late.stdoutBytes}`)).sha256);
    expect(log.filter((line) => line.startsWith('output log:')).length).toBeGreaterThan(0);
    expect((await api.get(paths.host)).status).toBe(200);

    // Room again: the same environment and another one stream exactly.
    rmSync(join(mountPoint, 'ballast'));
    const other = 'log-full-other';
    const ready = environmentReady(host, other);
    await startDirectExecutor({ remoteUrl: host.url, environmentId: other, credentials: EXECUTOR_CREDENTIALS });
    await within(ready, 30_000, 'the other environment joining');
    const expected = await expectedDigest(SMALL);
    for (const env of [environmentId, other]) {
      const next = await startProcess(api, env, { argv: ['/bin/sh', '-c', SMALL] });
      const read = await within(digestStream({ url: `${host.url}${paths.events(env, next.id)}`, token: OPERATOR_TOKEN }), 30_000, `the stream in ${env}`);
      expect({ env, status: read.status, end: read.end, gaps: read.gaps, markers: read.markers, last: read.last?.event, sha256: read.sha256 }).toEqual({
        env,
        status: 200,
        end: 'end',
        gaps: [],
        markers: [],
        last: 'closed',
        sha256: expected.sha256,
      });
    }
    expect(await shell(`df -k '${mountPoint}' | tail -1`)).toMatch(/tmpfs/);
  });
});
