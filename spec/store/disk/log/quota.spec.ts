import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { truncatedRange } from '../../../../src/store/log-events';
import { nodeLogFs } from '../../../../src/store/disk/log/log-fs';
import { writeManifest } from '../../../../src/store/disk/log/manifest';
import { OutputLog } from '../../../../src/store/disk/log/output-log';
import { RECORD_HEADER_BYTES } from '../../../../src/store/disk/log/record';
import { outputBytes } from '../../../exec/event-builders';
import { readAll, removeTempDirs, tempDir, untimed } from '../log-support';

afterEach(removeTempDirs);

const PAYLOAD = 100;
const RECORD = RECORD_HEADER_BYTES + PAYLOAD;
const payload = (seq: number): Uint8Array => new Uint8Array(PAYLOAD).fill(seq & 0xff);
const outputs = (from: number, to: number): unknown[] => Array.from({ length: to - from + 1 }, (_v, i) => outputBytes(from + i, payload(from + i)));
const options = { segmentBytes: 10 * RECORD, quotaBytes: 35 * RECORD };

describe('OutputLog quota', () => {
  it('keeps the first segment and the newest ones, with ONE marker with the exact dropped counts', async () => {
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'p', options);
    for (let seq = 1; seq <= 100; seq += 1) log.append(outputBytes(seq, payload(seq)));
    await log.flush();
    const expected = [...outputs(1, 10), truncatedRange('quota', 11, 80, 70 * PAYLOAD), ...outputs(81, 100)];
    expect(untimed(await readAll(log))).toEqual(expected);
    expect(log.diskBytes).toBe(30 * RECORD);
    expect({ storedEvents: log.storedEvents, storedBytes: log.storedBytes }).toEqual({ storedEvents: 30, storedBytes: 30 * PAYLOAD });
    await log.close();
    expect((await readdir(dir)).filter((name) => name.endsWith('.seg'))).toEqual(['00000000000000000001.seg', '00000000000000000081.seg', '00000000000000000091.seg']);
    // Each trim widened the range by one segment: the steps say where, so a reader that got an earlier marker gets only what followed.
    const steps = [20, 30, 40, 50, 60, 70, 80].map((toSeq) => ({ toSeq, bytes: (toSeq - 10) * PAYLOAD }));
    expect(JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'))).toEqual({ version: 1, dropped: { fromSeq: 11, toSeq: 80, events: 70, bytes: 7000, steps } });
  });

  it('gives the same marker after a restart; a reader starting inside the dropped range gets only what it asked for, exactly', async () => {
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'p', options);
    for (let seq = 1; seq <= 100; seq += 1) log.append(outputBytes(seq, payload(seq)));
    await log.close();
    const reopened = await OutputLog.open(dir, 'p', options);
    expect(untimed(await readAll(reopened))).toEqual([...outputs(1, 10), truncatedRange('quota', 11, 80, 70 * PAYLOAD), ...outputs(81, 100)]);
    // After seq 40 (a widening's end): seqs 41 to 80 are missing, with their exact bytes; none the reader did not ask for.
    expect(untimed(await readAll(reopened, 40))).toEqual([truncatedRange('quota', 41, 80, 40 * PAYLOAD), ...outputs(81, 100)]);
    // After seq 44, inside a segment dropped whole: 45 to 80, the bytes counted from that segment's start (at most one segment more).
    expect(untimed(await readAll(reopened, 44))).toEqual([truncatedRange('quota', 45, 80, 40 * PAYLOAD), ...outputs(81, 100)]);
    expect(untimed(await readAll(reopened, 85))).toEqual(outputs(86, 100));
    await reopened.close();
  });

  it('drops a segment the manifest names that a crash left behind, at reopen', async () => {
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'p', { segmentBytes: 10 * RECORD });
    for (let seq = 1; seq <= 40; seq += 1) log.append(outputBytes(seq, payload(seq)));
    await log.close();
    // The manifest was replaced, the crash came before segment 11 went.
    await writeManifest(nodeLogFs, dir, { fromSeq: 11, toSeq: 20, events: 10, bytes: 1000 });
    const reopened = await OutputLog.open(dir, 'p');
    expect((await readdir(dir)).filter((name) => name.endsWith('.seg'))).toEqual(['00000000000000000001.seg', '00000000000000000021.seg', '00000000000000000031.seg']);
    expect(untimed(await readAll(reopened))).toEqual([...outputs(1, 10), truncatedRange('quota', 11, 20, 1000), ...outputs(21, 40)]);
    await reopened.close();
  });
});
