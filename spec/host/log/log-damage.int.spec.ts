/**
 * Damaged segments through the host: two processes logged (256 KiB segments), then the host closed;
 * one process's log has a middle segment cut in the middle of a record, the other's has one byte of a
 * middle record's payload flipped. A new host on the same data dir serves, for each, every good record
 * (sha256-exact against the records left intact) and one `truncated` marker with reason `corrupt` for
 * exactly the damaged range, then `closed`.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeRecord } from '../../../src/store/disk/log/record';
import { OPERATOR_TOKEN, startApiHost, startProcess } from '../api/api-host';
import { paths, within } from '../api/api-client';
import { digestStream, expectedDigest } from './log-stream-digest';

jest.setTimeout(90_000);

/** `seq 1 400000`: 2.7 MB, about 11 segments of 256 KiB. */
const PRODUCER = 'seq 1 400000';
const ENVIRONMENT = 'log-damage';

/** One record of a segment file as found on disk. */
interface FoundRecord {
  readonly file: string;
  readonly offset: number;
  readonly size: number;
  readonly seq: number;
  readonly stdout: Buffer | undefined;
}

/** Every record of a process's segments, in order (the files are whole: the host closed). */
function recordsOf(dir: string): FoundRecord[] {
  const records: FoundRecord[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.seg')).sort()) {
    const file = join(dir, name);
    const bytes = readFileSync(file);
    for (let offset = 0; offset < bytes.byteLength; ) {
      const record = decodeRecord(bytes, offset, bytes.byteLength);
      if (record.status !== 'ok') throw new Error(`${file} at ${offset}: ${record.status} before any damage`);
      const event = record.event;
      const stdout = event.type === 'output' && event.stream === 'stdout' ? Buffer.from(event.chunk) : undefined;
      records.push({ file, offset, size: record.size, seq: event.seq, stdout });
      offset += record.size;
    }
  }
  return records;
}

/** sha256 of the stdout of the records whose seq is outside `from..to`. */
const shaWithout = (records: readonly FoundRecord[], from: number, to: number): string =>
  records
    .filter((r) => r.seq < from || r.seq > to)
    .reduce((hash, r) => (r.stdout === undefined ? hash : hash.update(r.stdout)), createHash('sha256'))
    .digest('hex');

describe('damaged segments, read through a new host', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'exec-rx-log-damage-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves every good record and a corrupt marker for exactly the damaged range', async () => {
    const outputLog = { dataDir, segmentBytes: 256 * 1024 };
    const expected = await expectedDigest(PRODUCER);
    const first = await startApiHost({ environmentId: ENVIRONMENT, host: { outputLog } });
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const started = await startProcess(first.api, ENVIRONMENT, { argv: ['/bin/sh', '-c', PRODUCER] });
      const whole = await within(digestStream({ url: `${first.host.url}${paths.events(ENVIRONMENT, started.id)}`, token: OPERATOR_TOKEN }), 30_000, 'a whole read');
      expect({ sha256: whole.sha256, markers: whole.markers, last: whole.last?.event }).toEqual({ sha256: expected.sha256, markers: [], last: 'closed' });
      ids.push(started.id);
    }
    await first.host.close();
    const [cutId, flippedId] = ids;
    if (cutId === undefined || flippedId === undefined) throw new Error('two processes expected');

    // The first: a middle segment cut in the middle of its middle record; that segment's later records go with it.
    const cutRecords = recordsOf(join(dataDir, 'processes', ENVIRONMENT, cutId));
    const files = [...new Set(cutRecords.map((r) => r.file))];
    const cutFile = files[Math.floor(files.length / 2)];
    expect(files.length).toBeGreaterThan(4);
    const inCutFile = cutRecords.filter((r) => r.file === cutFile);
    const torn = inCutFile[Math.floor(inCutFile.length / 2)];
    const lastInFile = inCutFile.at(-1);
    if (cutFile === undefined || torn === undefined || lastInFile === undefined) throw new Error('no middle record');
    truncateSync(cutFile, torn.offset + Math.floor(torn.size / 2));

    // The second: one payload byte of a middle record flipped.
    const flipRecords = recordsOf(join(dataDir, 'processes', ENVIRONMENT, flippedId));
    const flipOutputs = flipRecords.filter((r) => r.stdout !== undefined);
    const flipped = flipOutputs[Math.floor(flipOutputs.length / 2)];
    if (flipped?.stdout === undefined) throw new Error('no middle output record');
    const flipFile = readFileSync(flipped.file);
    const at = flipped.offset + 32 + Math.floor(flipped.stdout.byteLength / 2);
    flipFile[at] = (flipFile[at] ?? 0) ^ 0x5a;
    writeFileSync(flipped.file, flipFile);

    const second = await startApiHost({ environmentId: ENVIRONMENT, host: { outputLog } });
    const read = (id: string): Promise<Awaited<ReturnType<typeof digestStream>>> =>
      within(digestStream({ url: `${second.host.url}${paths.events(ENVIRONMENT, id)}`, token: OPERATOR_TOKEN }), 30_000, `the read of ${id}`);
    const [cut, flip] = [await read(cutId), await read(flippedId)];
    const summary = (digest: Awaited<ReturnType<typeof digestStream>>): unknown => ({
      status: digest.status,
      end: digest.end,
      gaps: digest.gaps,
      firstSeq: digest.firstSeq,
      lastSeq: digest.lastSeq,
      last: digest.last?.event,
      sha256: digest.sha256,
      markers: digest.markers.map((m) => ({ reason: m.reason, fromSeq: m.fromSeq, toSeq: m.toSeq, nextSeq: m.nextSeq, droppedEvents: m.droppedEvents })),
    });
    expect(summary(cut)).toEqual({
      status: 200,
      end: 'end',
      gaps: [],
      firstSeq: 1,
      lastSeq: cutRecords.at(-1)?.seq,
      last: 'closed',
      sha256: shaWithout(cutRecords, torn.seq, lastInFile.seq),
      markers: [{ reason: 'corrupt', fromSeq: torn.seq, toSeq: lastInFile.seq, nextSeq: lastInFile.seq + 1, droppedEvents: lastInFile.seq - torn.seq + 1 }],
    });
    expect(summary(flip)).toEqual({
      status: 200,
      end: 'end',
      gaps: [],
      firstSeq: 1,
      lastSeq: flipRecords.at(-1)?.seq,
      last: 'closed',
      sha256: shaWithout(flipRecords, flipped.seq, flipped.seq),
      markers: [{ reason: 'corrupt', fromSeq: flipped.seq, toSeq: flipped.seq, nextSeq: flipped.seq + 1, droppedEvents: 1 }],
    });
    // Only payload bytes were damaged in the flipped record: its byte count is exact.
    expect(flip.markers[0]?.droppedBytes).toBe(flipped.stdout.byteLength);
  });
});
