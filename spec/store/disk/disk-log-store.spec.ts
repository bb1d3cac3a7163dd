import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { OutputLogError } from '../../../src/errors';
import { truncatedRange } from '../../../src/store/log-events';
import type { ProcessKey, ProcessMeta } from '../../../src/store/process-meta';
import { DiskLogStore } from '../../../src/store/disk/disk-log-store';
import { RECORD_HEADER_BYTES } from '../../../src/store/disk/log/record';
import { closed, exited, outputBytes, plain } from '../../exec/event-builders';
import { readAll, removeTempDirs, settle, SpyFs, tempDir, untimed, VirtualClock } from './log-support';

afterEach(removeTempDirs);

const PAYLOAD = 100;
const RECORD = RECORD_HEADER_BYTES + PAYLOAD;
const DAY = 24 * 60 * 60 * 1000;
const payload = (seq: number): Uint8Array => new Uint8Array(PAYLOAD).fill(seq & 0xff);
const outputs = (from: number, to: number): unknown[] => Array.from({ length: to - from + 1 }, (_v, i) => outputBytes(from + i, payload(from + i)));
const key = (processId: string, environmentId = 'env-1'): ProcessKey => ({ environmentId, processId });

/** What `store` knows of `process` now (its in-memory list: what the port's `meta` resolves with). */
const metaNow = (store: DiskLogStore, process: ProcessKey): ProcessMeta | undefined => store.listNow().find((meta) => meta.environmentId === process.environmentId && meta.processId === process.processId);

describe('DiskLogStore', () => {
  it('takes back the log of a process of before: it continues after its last record, in a new segment, and lists running again', async () => {
    const clock = new VirtualClock();
    const dataDir = await tempDir();
    const options = { dataDir, scheduler: clock.scheduler, totalBytes: 1 << 30 };
    const store = await DiskLogStore.open(options);
    const log = store.create(key('kept'), { argv: ['yes'], tty: false });
    for (let seq = 1; seq <= 5; seq += 1) log.append(outputBytes(seq, payload(seq)));
    await log.flush(); // what a crash leaves: written, never closed
    await store.close();

    const restarted = await DiskLogStore.open(options);
    expect((await restarted.adoptable('env-1')).map((meta) => meta.processId)).toEqual(['kept']);
    expect(await restarted.adoptable('env-2')).toEqual([]);
    const lastSeq = await restarted.adopt(key('kept'), 1);
    const adopted = await restarted.openReader(key('kept'));
    if (adopted === undefined) throw new Error('the store holds the process');
    expect({ lastSeq, state: metaNow(restarted, key('kept'))?.state }).toEqual({ lastSeq: 5, state: 'running' });
    for (let seq = 6; seq <= 8; seq += 1) adopted.append(outputBytes(seq, payload(seq)));
    adopted.append(exited(9, 0));
    adopted.append(closed(10));
    await settle(() => metaNow(restarted, key('kept'))?.state === 'closed');
    expect(untimed(await readAll(adopted))).toEqual([...outputs(1, 8), plain(exited(9, 0)), plain(closed(10))]);
    // The files of before are never appended to: the continuation is a segment of its own, named by its first seq.
    expect((await readdir(join(dataDir, 'processes', 'env-1', 'kept'))).filter((name) => name.endsWith('.seg'))).toEqual(['00000000000000000001.seg', '00000000000000000006.seg']);
    expect(await restarted.adopt(key('nobody'), 1)).toBeUndefined();
    await restarted.close();
  });

  it('marks a process of before lost, with its reason, and keeps its log readable', async () => {
    const clock = new VirtualClock();
    const dataDir = await tempDir();
    const options = { dataDir, scheduler: clock.scheduler, totalBytes: 1 << 30 };
    const store = await DiskLogStore.open(options);
    const log = store.create(key('gone'), { argv: ['sleep', '100'], tty: false });
    log.append(outputBytes(1, payload(1)));
    await log.flush();
    await store.close();

    const restarted = await DiskLogStore.open(options);
    await restarted.markLost(key('gone'), 'the executor no longer has its session');
    expect(metaNow(restarted, key('gone'))).toMatchObject({ state: 'lost', lostReason: 'the executor no longer has its session' });
    expect(await restarted.adoptable('env-1')).toEqual([]);
    const read = await restarted.openReader(key('gone'));
    expect(untimed((await read?.read(0, 1 << 20))?.events ?? [])).toEqual(outputs(1, 1));
    await restarted.close();
    const again = await DiskLogStore.open(options);
    expect(metaNow(again, key('gone'))).toMatchObject({ state: 'lost', lostReason: 'the executor no longer has its session' });
    await again.close();
  });

  it('lists the processes of before a restart with their last known state, and reads their logs', async () => {
    const clock = new VirtualClock();
    const dataDir = await tempDir();
    const options = { dataDir, scheduler: clock.scheduler, totalBytes: 1 << 30 };
    const store = await DiskLogStore.open(options);
    const start = clock.now();
    const done = store.create(key('done'), { argv: ['ls', '-l'], tty: false });
    const running = store.create(key('../odd id'), { argv: ['top'], tty: true });
    done.append(outputBytes(1, payload(1)));
    clock.advance(1000);
    done.append(exited(2, 3));
    clock.advance(1000);
    done.append(closed(3));
    for (let seq = 1; seq <= 4; seq += 1) running.append(outputBytes(seq, payload(seq)));
    await store.close();
    expect(await readdir(join(dataDir, 'processes', 'env-1'))).toEqual(['%2E%2E%2Fodd%20id', 'done'].sort());

    clock.advance(60_000);
    const reopened = await DiskLogStore.open(options);
    expect(reopened.listNow()).toEqual([
      { environmentId: 'env-1', processId: '../odd id', argv: ['top'], tty: true, state: 'unknown', exitCode: null, startedAt: start, exitedAt: null, endedAt: start + 62_000, released: false, lostReason: null },
      { environmentId: 'env-1', processId: 'done', argv: ['ls', '-l'], tty: false, state: 'closed', exitCode: 3, startedAt: start, exitedAt: start + 1000, endedAt: start + 2000, released: false, lostReason: null },
    ]);
    const doneLog = await reopened.openReader(key('done'));
    const runningLog = await reopened.openReader(key('../odd id'));
    expect(untimed(doneLog === undefined ? [] : await readAll(doneLog))).toEqual([outputBytes(1, payload(1)), exited(2, 3), closed(3)]);
    expect(untimed(runningLog === undefined ? [] : await readAll(runningLog))).toEqual(outputs(1, 4));
    expect(await reopened.openReader(key('never'))).toBeUndefined();
    await reopened.close();
    // The unknown state was written back: a third start sees the same.
    const third = await DiskLogStore.open(options);
    expect(metaNow(third, key('../odd id'))).toMatchObject({ state: 'unknown', endedAt: start + 62_000 });
    await third.close();
  });

  it('removes whole logs past the total bound: released ones first, then ended ones oldest first; a running one is trimmed, never removed', async () => {
    const clock = new VirtualClock();
    const fs = new SpyFs(clock);
    const dataDir = await tempDir();
    // Ended logs: 9 outputs and closed (1220 bytes). The running one: 60 outputs in segments of 10.
    const store = await DiskLogStore.open({ dataDir, fs, scheduler: clock.scheduler, segmentBytes: 10 * RECORD, totalBytes: 2 * 1220 + 60 * RECORD });
    const ended = (name: string): void => {
      const log = store.create(key(name));
      for (let seq = 1; seq <= 9; seq += 1) log.append(outputBytes(seq, payload(seq)));
      log.append(closed(10));
      clock.advance(1000);
    };
    ended('old');
    ended('released');
    ended('newer');
    ended('newest');
    await store.release(key('released'));
    const running = store.create(key('running'));
    for (let seq = 1; seq <= 60; seq += 1) running.append(outputBytes(seq, payload(seq)));
    await running.flush();
    await store.enforce();
    const removed = (): string[] => fs.removedTrees.map((dir) => dir.slice(dir.lastIndexOf('/') + 1));
    // 4 * 1220 bytes and 60 records are over the bound by two ended logs: the released one goes, then the oldest.
    expect(removed()).toEqual(['released', 'old']);
    expect(store.listNow().map((meta) => meta.processId)).toEqual(['newer', 'newest', 'running']);
    expect(store.diskBytes).toBeLessThanOrEqual(store.totalBytes);
    for (let seq = 61; seq <= 120; seq += 1) running.append(outputBytes(seq, payload(seq)));
    await running.flush();
    await store.enforce();
    expect(removed()).toEqual(['released', 'old', 'newer', 'newest']);
    expect(store.listNow().map((meta) => meta.processId)).toEqual(['running']);
    expect(store.diskBytes).toBeLessThanOrEqual(store.totalBytes);
    // 12 segments of 1320 bytes, 5480 over: the 5 oldest after the first go.
    expect(untimed(await readAll(running))).toEqual([...outputs(1, 10), truncatedRange('quota', 11, 60, 50 * PAYLOAD), ...outputs(61, 120)]);
    await store.close();
  });

  it('removes the logs of processes ended longer ago than the retention, on its sweep; a running one stays', async () => {
    const clock = new VirtualClock();
    const store = await DiskLogStore.open({ dataDir: await tempDir(), scheduler: clock.scheduler, retentionMs: 7 * DAY, sweepIntervalMs: 60 * 60_000 });
    const old = store.create(key('old'));
    old.append(closed(1));
    clock.advance(DAY);
    const young = store.create(key('young'));
    young.append(closed(1));
    const running = store.create(key('running'));
    running.append(outputBytes(1, payload(1)));
    await settle(() => store.listNow().every((meta) => meta.processId === 'running' || meta.state === 'closed'));
    clock.advance(6 * DAY);
    await settle(() => store.listNow().length === 2);
    expect(store.listNow().map((meta) => meta.processId)).toEqual(['running', 'young']);
    clock.advance(DAY);
    await settle(() => store.listNow().length === 1);
    expect(store.listNow().map((meta) => meta.processId)).toEqual(['running']);
    await store.close();
  });

  it('hands one process log failure to failures$; the other processes go on', async () => {
    const fs = new SpyFs();
    const store = await DiskLogStore.open({ dataDir: await tempDir(), fs });
    const failures: unknown[] = [];
    store.failures$.subscribe((error) => failures.push(plain(error)));
    fs.failWrites = { path: (path) => path.includes('/full/') && path.endsWith('.seg'), code: 'EIO' };
    const full = store.create(key('full'));
    const fine = store.create(key('fine'));
    full.append(outputBytes(1, payload(1)));
    fine.append(outputBytes(1, payload(1)));
    await settle(() => failures.length === 1);
    await fine.flush();
    expect(failures).toEqual([plain(new OutputLogError('full', 'EIO', 'write'))]);
    expect(untimed(await readAll(fine))).toEqual(outputs(1, 1));
    await store.close();
  });
});
