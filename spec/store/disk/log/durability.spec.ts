import { OutputLogError } from '../../../../src/errors';
import { BufferPool } from '../../../../src/store/disk/log/buffer-pool';
import { truncatedRange } from '../../../../src/store/log-events';
import { OutputLog } from '../../../../src/store/disk/log/output-log';
import { RECORD_HEADER_BYTES } from '../../../../src/store/disk/log/record';
import { closed, exited, outputBytes, plain } from '../../../exec/event-builders';
import { readAll, removeTempDirs, settle, SpyFs, tempDir, untimed, VirtualClock } from '../log-support';

afterEach(removeTempDirs);

const PAYLOAD = 100;
const RECORD = RECORD_HEADER_BYTES + PAYLOAD;
const payload = (seq: number): Uint8Array => new Uint8Array(PAYLOAD).fill(seq & 0xff);
const outputs = (from: number, to: number): unknown[] => Array.from({ length: to - from + 1 }, (_v, i) => outputBytes(from + i, payload(from + i)));

describe('OutputLog durability', () => {
  it('fdatasyncs at most once per virtual second while output flows, at once on exit, and at close', async () => {
    const clock = new VirtualClock();
    const fs = new SpyFs(clock);
    const log = OutputLog.create(await tempDir(), 'p', { scheduler: clock.scheduler, fs });
    const start = clock.now();
    let seq = 0;
    // 3.5 s of output, a chunk every 50 ms, each written before the next comes.
    const idle = (): Promise<void> => settle(() => log.backlogBytes === 0 && fs.busy === 0);
    for (let step = 0; step < 70; step += 1) {
      seq += 1;
      log.append(outputBytes(seq, payload(seq)));
      await idle();
      clock.advance(50);
      await settle(undefined, 3); // a sync the timer started has called datasync
      await idle();
    }
    const timed = fs.syncs.map((sync) => sync.at - start);
    expect(fs.segmentWrites).toBe(70);
    // The first sync is due at once; it runs when the clock first moves (50 ms), the next ones a second apart.
    expect(timed).toEqual([50, 1050, 2050, 3050]);
    seq += 1;
    log.append(exited(seq, 0));
    await settle(() => fs.syncs.length === 5);
    expect(fs.syncs.map((sync) => sync.at - start)).toEqual([50, 1050, 2050, 3050, 3500]);
    seq += 1;
    log.append(outputBytes(seq, payload(seq)));
    await log.close();
    expect(fs.syncs.map((sync) => sync.at - start)).toEqual([50, 1050, 2050, 3050, 3500, 3500]);
    clock.advance(5000);
    expect(fs.syncs).toHaveLength(6);
  });

  it('turns ENOSPC into a typed failure for readers and failures$, keeps what was written, leaves other logs alone', async () => {
    const fs = new SpyFs();
    const failingDir = await tempDir();
    const otherDir = await tempDir();
    const failing = OutputLog.create(failingDir, 'p-full', { fs });
    const other = OutputLog.create(otherDir, 'p-other', { fs });
    const failures: unknown[] = [];
    failing.failures$.subscribe((error) => failures.push(plain(error)));
    for (let seq = 1; seq <= 5; seq += 1) failing.append(outputBytes(seq, payload(seq)));
    await failing.flush();
    fs.failWrites = { path: (path) => path.startsWith(failingDir), code: 'ENOSPC' };
    for (let seq = 6; seq <= 8; seq += 1) failing.append(outputBytes(seq, payload(seq)));
    for (let seq = 1; seq <= 8; seq += 1) other.append(outputBytes(seq, payload(seq)));
    await settle(() => failing.failure !== undefined);
    expect(failing.append(outputBytes(9, payload(9)))).toBe(true); // a failed log never pauses its producer
    failing.append(closed(10));
    const error = new OutputLogError('p-full', 'ENOSPC', 'write');
    expect(failures).toEqual([plain(error)]);
    expect(error.message).toBe('output log of process p-full failed to write: ENOSPC');
    // What was taken before the failure is still served (from memory); what came after is a marker.
    expect(untimed(await readAll(failing))).toEqual([...outputs(1, 8), truncatedRange('writeFailed', 9, 10, PAYLOAD), { type: 'failed', error }]);
    await failing.close();
    await other.close();
    expect(untimed(await readAll(other))).toEqual(outputs(1, 8));
    const reopened = await OutputLog.open(failingDir, 'p-full');
    expect(untimed(await readAll(reopened))).toEqual(outputs(1, 5));
    await reopened.close();
  });

  it('reports a backlog over the high mark and clears it at the low mark', async () => {
    const fs = new SpyFs();
    fs.holdWrites = true;
    // Two records a write buffer; a write takes every buffer queued when it starts.
    const log = OutputLog.create(await tempDir(), 'p', { fs, highWaterBytes: 10 * RECORD, lowWaterBytes: 4 * RECORD, pool: new BufferPool(2 * RECORD, 2) });
    const pressure: boolean[] = [];
    log.pressure$.subscribe((paused) => pressure.push(paused));
    const first = [log.append(outputBytes(1, payload(1))), log.append(outputBytes(2, payload(2)))];
    await settle(() => fs.heldWrites === 1); // the write of records 1-2 started, and waits
    const accepted = Array.from({ length: 10 }, (_v, i) => log.append(outputBytes(i + 3, payload(i + 3))));
    expect([...first, ...accepted]).toEqual([true, true, true, true, true, true, true, true, true, false, false, false]);
    expect(log.backlogBytes).toBe(12 * RECORD);
    let resumed = false;
    void log.whenBelowLowMark().then(() => (resumed = true));
    // Records 1-2 written: 10 left, above the low mark, still behind.
    fs.releaseWrite();
    await settle(() => log.backlogBytes === 10 * RECORD);
    expect({ resumed, pressure }).toEqual({ resumed: false, pressure: [false, true] });
    // The next write took the 5 buffers queued meanwhile (records 3-12) in one call.
    await settle(() => fs.heldWrites === 1);
    fs.releaseWrite();
    await settle(() => log.backlogBytes === 0);
    expect({ resumed, pressure, writes: fs.segmentWrites }).toEqual({ resumed: true, pressure: [false, true, false], writes: 2 });
    fs.holdWrites = false;
    fs.releaseWrite();
    await log.close();
    expect(untimed(await readAll(log))).toEqual(outputs(1, 12));
  });

  it('lets a reader follow the live tail without a hole between the files and memory', async () => {
    const log = OutputLog.create(await tempDir(), 'p', { segmentBytes: 20 * RECORD, pool: new BufferPool(3 * RECORD, 2) });
    const seen: unknown[] = [];
    const reader = (async () => {
      for (let cursor = 0; ; ) {
        const read = await log.read(cursor, 250);
        seen.push(...untimed(read.events));
        cursor = read.lastSeq;
        if (read.ended) return;
        if (read.caughtUp) await log.waitFor(cursor);
      }
    })();
    for (let seq = 1; seq <= 300; seq += 1) {
      log.append(outputBytes(seq, payload(seq)));
      if (seq % 7 === 0) await settle(undefined, seq % 3);
    }
    log.append(closed(301));
    await reader;
    expect(seen).toEqual([...outputs(1, 300), closed(301)]);
    await log.close();
  });
});
