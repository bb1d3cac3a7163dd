import { createHash, randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { OutputLog } from '../../../../src/store/disk/log/output-log';
import { BufferPool } from '../../../../src/store/disk/log/buffer-pool';
import { MAX_BUFFERS_PER_WRITE } from '../../../../src/store/disk/log/log-writer';
import { RECORD_HEADER_BYTES } from '../../../../src/store/disk/log/record';
import type { SequencedEvent } from '../../../../src/wire/process-event';
import { closed, exited, output, outputBytes } from '../../../exec/event-builders';
import type { LogEvent } from '../../../../src/store/log-events';
import { truncatedRange } from '../../../../src/store/log-events';
import { readAll, removeTempDirs, settle, SpyFs, tempDir, untimed, VirtualClock } from '../log-support';

afterEach(removeTempDirs);

const sha256 = (events: readonly LogEvent[]): string => {
  const hash = createHash('sha256');
  for (const event of events) if (event.type === 'output') hash.update(event.chunk);
  return hash.digest('hex');
};

describe('OutputLog', () => {
  it('gives back every kind of event, in seq order, with its receipt time, from memory and from disk', async () => {
    const clock = new VirtualClock();
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'p1', { scheduler: clock.scheduler });
    const events: SequencedEvent[] = [output(1, 'out\n'), output(2, 'err\n', 'stderr'), output(3, 'tty', 'pty'), exited(4, 2, true), output(5, 'late\n'), closed(6)];
    events.forEach((event, i) => {
      if (i === 3) clock.advance(250);
      log.append(event);
    });
    const fromMemory = await log.read(0, 1 << 20);
    expect(fromMemory).toEqual({ events: events.map((e, i) => ({ ...e, time: clock.now() - (i < 3 ? 250 : 0) })), lastSeq: 6, caughtUp: true, ended: true, memoryFrom: 0 });
    await log.close();
    // From the file: the same events, none of them the log's own objects (memoryFrom past the end).
    const fromFile = { ...fromMemory, memoryFrom: 6 };
    expect(await log.read(0, 1 << 20)).toEqual(fromFile);
    const reopened = await OutputLog.open(dir, 'p1');
    expect(await reopened.read(0, 1 << 20)).toEqual(fromFile);
    expect(await reopened.read(3, 1 << 20)).toEqual({ ...fromFile, events: fromMemory.events.slice(3), memoryFrom: 3 });
    await reopened.close();
  });

  it('reads at once what memory holds (the log\'s own objects, as read gives them) and leaves what is in a file to read', async () => {
    const clock = new VirtualClock();
    const log = OutputLog.create(await tempDir(), 'now', { scheduler: clock.scheduler });
    expect(log.readNow(0, 1 << 20)).toEqual({ events: [], lastSeq: 0, caughtUp: true, ended: false, memoryFrom: 0 });
    log.append(output(1, 'one\n'));
    log.append(output(2, 'two\n'));
    const now = log.readNow(0, 1 << 20);
    expect(now).toEqual(await log.read(0, 1 << 20));
    expect(now?.events.map((event) => (event.type === 'output' ? event.seq : -1))).toEqual([1, 2]);
    // The same objects for every reader: their frames are shared.
    expect(log.readNow(1, 1 << 20)?.events[0]).toBe(now?.events[1]);
    await log.flush(); // written: the events left memory for the file
    expect(log.readNow(0, 1 << 20)).toBeUndefined();
    expect((await log.read(0, 1 << 20)).events).toHaveLength(2);
    log.append(output(3, 'three\n'));
    expect(log.readNow(2, 1 << 20)?.events.map((event) => (event.type === 'output' ? event.seq : -1))).toEqual([3]);
    await log.close();
  });

  it('wakes every waiter at the append it waits for, and at the end, never before', async () => {
    const log = OutputLog.create(await tempDir(), 'wait');
    const woke: string[] = [];
    void log.waitFor(0).then(() => woke.push('after 0'));
    void log.waitFor(1).then(() => woke.push('after 1'));
    await settle();
    expect(woke).toEqual([]);
    log.append(output(1, 'one\n'));
    await settle();
    expect(woke).toEqual(['after 0']);
    void log.waitFor(5).then(() => woke.push('after 5'));
    log.append(output(2, 'two\n'));
    await settle();
    expect(woke).toEqual(['after 0', 'after 1']);
    await log.close(); // no more appends: the last waiter is let go
    await settle();
    expect(woke).toEqual(['after 0', 'after 1', 'after 5']);
  });

  it('reads 64 MiB back sha256-exact from seq 0 and exactly what follows a random seq', async () => {
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'big', { segmentBytes: 4 * 1024 * 1024 });
    const chunks: Uint8Array[] = [];
    const data = randomBytes(64 * 1024 * 1024);
    for (let at = 0, seq = 1; at < data.byteLength; seq += 1) {
      const size = Math.min(data.byteLength - at, 1 + ((seq * 7919) % 8192));
      const chunk = new Uint8Array(data.buffer, data.byteOffset + at, size);
      chunks.push(chunk);
      at += size;
      if (!log.append(outputBytes(seq, chunk))) await log.whenBelowLowMark();
    }
    log.append(closed(chunks.length + 1));
    await log.close();
    const whole = createHash('sha256').update(data).digest('hex');
    const reopened = await OutputLog.open(dir, 'big');
    const all = await readAll(reopened, 0, 4 * 1024 * 1024);
    expect(all.map((event) => (event.type === 'failed' || event.type === 'truncated' ? -1 : event.seq))).toEqual(chunks.map((_c, i) => i + 1).concat(chunks.length + 1));
    expect(sha256(all)).toBe(whole);
    const after = 1 + Math.floor(Math.random() * chunks.length);
    const rest = await readAll(reopened, after, 1024 * 1024);
    const expected = createHash('sha256');
    for (const chunk of chunks.slice(after)) expected.update(chunk);
    expect({ after, sha256: sha256(rest) }).toEqual({ after, sha256: expected.digest('hex') });
    expect(rest[0]).toMatchObject({ seq: after + 1 });
    await reopened.close();
  }, 120_000);

  it('batches the appends of a turn into one write call, none per record nor per write buffer', async () => {
    const fs = new SpyFs();
    const log = OutputLog.create(await tempDir(), 'p', { fs });
    for (let seq = 1; seq <= 1000; seq += 1) log.append(outputBytes(seq, new Uint8Array(1000 - RECORD_HEADER_BYTES)));
    await log.flush();
    expect({ writes: fs.segmentWrites, syncs: fs.syncs.length, bytes: log.diskBytes }).toEqual({ writes: 1, syncs: 1, bytes: 1_000_000 });
    for (let seq = 1001; seq <= 3000; seq += 1) log.append(outputBytes(seq, new Uint8Array(1000 - RECORD_HEADER_BYTES)));
    await log.close();
    expect(fs.segmentWrites).toBe(2); // 2 MB more: two 1 MiB buffers, one writev
  });

  it('takes at most MAX_BUFFERS_PER_WRITE buffers in one write call', async () => {
    const fs = new SpyFs();
    const log = OutputLog.create(await tempDir(), 'p', { fs, pool: new BufferPool(1000, 4) });
    const count = MAX_BUFFERS_PER_WRITE + 36; // one record per 1000-byte buffer
    for (let seq = 1; seq <= count; seq += 1) log.append(outputBytes(seq, new Uint8Array(1000 - RECORD_HEADER_BYTES)));
    await log.flush();
    expect({ writes: fs.segmentWrites, bytes: log.diskBytes }).toEqual({ writes: 2, bytes: count * 1000 });
    expect((await readAll(log)).map((event) => (event.type === 'output' ? event.seq : event.type))).toEqual(Array.from({ length: count }, (_v, i) => i + 1));
    await log.close();
  });

  it('records a hole: skipped seqs, or a gap with its bytes, are one evicted marker from memory, from the file and after a reopen', async () => {
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'p');
    for (const seq of [1, 2, 3, 7]) log.append(outputBytes(seq, new Uint8Array(10).fill(seq)));
    log.appendGap(12, 4096); // 8-11 will never come; the executor says 4096 bytes
    log.appendGap(12, 1); // nothing skipped: ignored
    log.append(outputBytes(12, new Uint8Array(10).fill(12)));
    const shape = (events: readonly LogEvent[]): unknown[] => events.map((e) => (e.type === 'output' ? e.seq : e));
    const expected = [1, 2, 3, truncatedRange('evicted', 4, 6, 0), 7, truncatedRange('evicted', 8, 11, 4096), 12];
    expect(shape(await readAll(log))).toEqual(expected);
    await log.close();
    expect(shape(await readAll(log))).toEqual(expected);
    const reopened = await OutputLog.open(dir, 'p');
    expect(shape(await readAll(reopened))).toEqual(expected);
    // Read from inside a hole: the marker covers only what the reader has not had.
    expect(shape((await reopened.read(9, 1 << 20)).events)).toEqual([truncatedRange('evicted', 10, 11, 0), 12]);
    expect(reopened.lastSeq).toBe(12);
    await reopened.close();
  });

  it('finds a hole that starts a segment (a log taken back after a restart, the executor\'s window past it): one marker, then the rest', async () => {
    const dir = await tempDir();
    const first = OutputLog.create(dir, 'p');
    for (let seq = 1; seq <= 10; seq += 1) first.append(outputBytes(seq, new Uint8Array(10).fill(seq)));
    await first.flush(); // a crash: written, never closed
    const log = await OutputLog.reopen(dir, 'p');
    log.appendGap(19, 0);
    for (let seq = 19; seq <= 20; seq += 1) log.append(outputBytes(seq, new Uint8Array(10).fill(seq)));
    const shape = (events: readonly LogEvent[]): unknown[] => events.map((e) => (e.type === 'output' ? e.seq : e));
    const expected = [truncatedRange('evicted', 11, 18, 0), 19, 20];
    expect(shape((await log.read(10, 1 << 20)).events)).toEqual(expected);
    await log.flush();
    expect(shape((await log.read(10, 1 << 20)).events)).toEqual(expected);
    await log.close();
    // The continuation is a segment of its own, named by the hole's first seq.
    expect((await readdir(dir)).filter((name) => name.endsWith('.seg'))).toEqual(['00000000000000000001.seg', '00000000000000000011.seg']);
    const reopened = await OutputLog.open(dir, 'p');
    expect(shape((await reopened.read(10, 1 << 20)).events)).toEqual(expected);
    expect(shape((await reopened.read(14, 1 << 20)).events)).toEqual([truncatedRange('evicted', 15, 18, 0), 19, 20]);
    await reopened.close();
  });

  it('moves a reader past seqs it cannot find (a segment file gone from under the log) with one corrupt marker, never an empty read', async () => {
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'p', { segmentBytes: 4 * (RECORD_HEADER_BYTES + 100) });
    for (let seq = 1; seq <= 12; seq += 1) log.append(outputBytes(seq, new Uint8Array(100).fill(seq)));
    await log.close();
    const segments = (await readdir(dir)).filter((name) => name.endsWith('.seg')).sort();
    expect(segments).toEqual(['00000000000000000001.seg', '00000000000000000005.seg', '00000000000000000009.seg']);
    await rm(join(dir, '00000000000000000005.seg'));
    const read = await log.read(4, 1 << 20);
    expect(read.events.map((e) => (e.type === 'output' ? e.seq : e))).toEqual([truncatedRange('corrupt', 5, 8, 0)]);
    expect((await log.read(read.lastSeq, 1 << 20)).events.map((e) => (e.type === 'output' ? e.seq : e.type))).toEqual([9, 10, 11, 12]);
  });

  it('ignores an event whose seq does not increase, and marks the seqs before its first as not held', async () => {
    const log = OutputLog.create(await tempDir(), 'p');
    log.append(output(3, 'c'));
    log.append(output(1, 'a'));
    log.append(output(3, 'again'));
    log.append(output(Number.NaN, 'nan'));
    log.append(closed(4));
    expect(untimed(await readAll(log))).toEqual([truncatedRange('evicted', 1, 2, 0), output(3, 'c'), closed(4)]);
    await log.close();
  });

  it('rolls segments at their size, each named by its first seq', async () => {
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'p', { segmentBytes: 4096 });
    const chunk = new Uint8Array(1000 - RECORD_HEADER_BYTES);
    for (let seq = 1; seq <= 10; seq += 1) log.append(outputBytes(seq, chunk));
    await log.close();
    expect((await readdir(dir)).filter((name) => name.endsWith('.seg'))).toEqual(['00000000000000000001.seg', '00000000000000000005.seg', '00000000000000000009.seg']);
    expect(untimed(await readAll(log))).toEqual(Array.from({ length: 10 }, (_v, i) => outputBytes(i + 1, chunk)));
  });

  it('finds a seq through the sparse index without reading the bytes before its entry', async () => {
    const dir = await tempDir();
    const log = OutputLog.create(dir, 'p', { segmentBytes: 8 * 1024 * 1024 });
    for (let seq = 1; seq <= 1000; seq += 1) log.append(outputBytes(seq, new Uint8Array(4096 - RECORD_HEADER_BYTES).fill(seq & 0xff)));
    await log.close();
    const fs = new SpyFs();
    const reopened = await OutputLog.open(dir, 'p', { fs, readWindowBytes: 64 * 1024 });
    fs.reads.length = 0;
    const read = await reopened.read(900, 8000);
    const payload = (seq: number): Uint8Array => new Uint8Array(4096 - RECORD_HEADER_BYTES).fill(seq & 0xff);
    expect(untimed(read.events)).toEqual([outputBytes(901, payload(901)), outputBytes(902, payload(902))]);
    const segmentReads = fs.reads.filter((call) => call.path.endsWith('.seg'));
    // Entries every 64 KiB: the one before seq 901 (offset 3686400) is at most 64 KiB before it.
    expect(Math.min(...segmentReads.map((call) => call.position))).toBeGreaterThanOrEqual(900 * 4096 - 64 * 1024);
    expect(segmentReads.reduce((sum, call) => sum + call.length, 0)).toBeLessThanOrEqual(64 * 1024 + 8192);
    await reopened.close();
  });
});
