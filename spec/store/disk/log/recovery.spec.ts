import { open, readdir, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { truncatedRange } from '../../../../src/store/log-events';
import { OutputLog } from '../../../../src/store/disk/log/output-log';
import { RECORD_HEADER_BYTES } from '../../../../src/store/disk/log/record';
import { closed, outputBytes } from '../../../exec/event-builders';
import { readAll, removeTempDirs, tempDir, untimed } from '../log-support';

afterEach(removeTempDirs);

const PAYLOAD = 100;
const RECORD = RECORD_HEADER_BYTES + PAYLOAD;
const payload = (seq: number): Uint8Array => new Uint8Array(PAYLOAD).fill(seq & 0xff);
const outputs = (from: number, to: number): unknown[] => Array.from({ length: to - from + 1 }, (_v, i) => outputBytes(from + i, payload(from + i)));

/** A log of `count` outputs of 100 bytes (132-byte records), written and closed. */
async function writtenLog(count: number, options: { segmentBytes?: number; indexIntervalBytes?: number } = {}): Promise<string> {
  const dir = await tempDir();
  const log = OutputLog.create(dir, 'p', options);
  for (let seq = 1; seq <= count; seq += 1) log.append(outputBytes(seq, payload(seq)));
  await log.close();
  return dir;
}

async function segments(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.seg')).map((name) => join(dir, name));
}

/** XORs one byte of a file. */
async function flip(path: string, offset: number): Promise<void> {
  const file = await open(path, 'r+');
  try {
    const byte = Buffer.alloc(1);
    await file.read(byte, 0, 1, offset);
    byte[0] = (byte[0] ?? 0) ^ 0x5a;
    await file.write(byte, 0, 1, offset);
  } finally {
    await file.close();
  }
}

describe('OutputLog recovery', () => {
  it('cuts a record torn in the middle at reopen and serves every good record before it', async () => {
    const dir = await writtenLog(20);
    const [segment = ''] = await segments(dir);
    await truncate(segment, 14 * RECORD + 50); // a crash in the middle of writing record 15
    const log = await OutputLog.open(dir, 'p');
    expect((await stat(segment)).size).toBe(14 * RECORD);
    expect(log.lastSeq).toBe(14);
    const read = await log.read(0, 1 << 20);
    expect({ ...read, events: untimed(read.events) }).toEqual({ events: outputs(1, 14), lastSeq: 14, caughtUp: true, ended: true, memoryFrom: 14 });
    await log.close();
  });

  it('cuts a torn header too (fewer bytes than a header)', async () => {
    const dir = await writtenLog(5);
    const [segment = ''] = await segments(dir);
    await truncate(segment, 4 * RECORD + 7);
    const log = await OutputLog.open(dir, 'p');
    expect(untimed(await readAll(log))).toEqual(outputs(1, 4));
    expect((await stat(segment)).size).toBe(4 * RECORD);
    await log.close();
  });

  it('cuts only the last segment: a torn tail is a crash while appending', async () => {
    const dir = await writtenLog(30, { segmentBytes: 10 * RECORD });
    const files = await segments(dir);
    expect(files).toHaveLength(3);
    await truncate(files[2] ?? '', 5 * RECORD + 1);
    const log = await OutputLog.open(dir, 'p');
    expect(untimed(await readAll(log))).toEqual(outputs(1, 25));
    await log.close();
  });

  it('never serves a record with a flipped payload byte: a corrupt marker for it, then every good record', async () => {
    const dir = await writtenLog(20);
    const [segment = ''] = await segments(dir);
    await flip(segment, 9 * RECORD + RECORD_HEADER_BYTES + 40); // in the payload of seq 10
    const log = await OutputLog.open(dir, 'p');
    expect((await stat(segment)).size).toBe(20 * RECORD); // damage with good records after it stays
    expect(untimed(await readAll(log))).toEqual([...outputs(1, 9), truncatedRange('corrupt', 10, 10, PAYLOAD), ...outputs(11, 20)]);
    expect(untimed(await readAll(log, 9))).toEqual([truncatedRange('corrupt', 10, 10, PAYLOAD), ...outputs(11, 20)]);
    expect(untimed(await readAll(log, 10))).toEqual(outputs(11, 20));
    await log.close();
  });

  it('picks up at the next sparse index entry when the damaged record lost its length', async () => {
    const dir = await writtenLog(40, { indexIntervalBytes: 10 * RECORD });
    const [segment = ''] = await segments(dir);
    await flip(segment, 12 * RECORD + 10); // the length field of seq 13; index entries at seqs 11, 21, 31
    const log = await OutputLog.open(dir, 'p', { indexIntervalBytes: 10 * RECORD });
    expect(untimed(await readAll(log))).toEqual([...outputs(1, 12), truncatedRange('corrupt', 13, 20, 8 * PAYLOAD), ...outputs(21, 40)]);
    await log.close();
  });

  it('goes on at the next segment when the damage runs to the end of an earlier one', async () => {
    const dir = await writtenLog(30, { segmentBytes: 10 * RECORD });
    const [first = ''] = await segments(dir);
    await flip(first, 7 * RECORD + 9); // the length of seq 8: nothing of the first segment after it can be found
    const log = await OutputLog.open(dir, 'p');
    const events = await readAll(log);
    expect(untimed(events)).toEqual([...outputs(1, 7), truncatedRange('corrupt', 8, 10, 3 * PAYLOAD), ...outputs(11, 30)]);
    await log.close();
  });

  it('ends a log whose closed record is intact, and drops a closed record torn by a crash', async () => {
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'p');
    log.append(outputBytes(1, payload(1)));
    log.append(closed(2));
    await log.close();
    const [segment = ''] = await segments(dir);
    const whole = await OutputLog.open(dir, 'p');
    expect(untimed(await readAll(whole))).toEqual([outputBytes(1, payload(1)), closed(2)]);
    await whole.close();
    await truncate(segment, RECORD + 5);
    const torn = await OutputLog.open(dir, 'p');
    expect(await torn.read(0, 1 << 20)).toMatchObject({ lastSeq: 1, caughtUp: true, ended: true });
    await torn.close();
  });
});
