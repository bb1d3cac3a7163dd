import { firstValueFrom, toArray } from 'rxjs';
import { OutputLogError, ProcessFailedError } from '../../../src/errors';
import type { ProcessEvent } from '../../../src/exec/process-event';
import { DiskHistory } from '../../../src/store/disk/disk-history';
import { truncatedRange } from '../../../src/store/log-events';
import { OutputLog } from '../../../src/store/disk/log/output-log';
import { DiskLogStore } from '../../../src/store/disk/disk-log-store';
import { nodeLogFs } from '../../../src/store/disk/log/log-fs';
import { processDir, readMeta } from '../../../src/store/disk/meta-file';
import type { FailedEvent } from '../../../src/exec/process-event';
import { closed, exited, output, outputBytes } from '../../exec/event-builders';
import { removeTempDirs, settle, SpyFs, tempDir, VirtualClock } from './log-support';

afterEach(removeTempDirs);

const PAYLOAD = 100;
const payload = (seq: number): Uint8Array => new Uint8Array(PAYLOAD).fill(seq & 0xff);
const outputs = (from: number, to: number): ProcessEvent[] => Array.from({ length: to - from + 1 }, (_v, i) => outputBytes(from + i, payload(from + i)));
const failed: FailedEvent = { type: 'failed', error: new ProcessFailedError('p', 'failed to recover process p: boom') };

async function history(): Promise<DiskHistory> {
  return new DiskHistory(OutputLog.create(await tempDir(), 'p'), {}, { replayReadBytes: 1000 });
}

describe('DiskHistory', () => {
  it('replays from the log, then goes live, with no gap and no duplicate while appends go on', async () => {
    const subject = await history();
    const seen: ProcessEvent[][] = [];
    const done: Promise<unknown>[] = [];
    for (let seq = 1; seq <= 200; seq += 1) {
      if (seq % 40 === 1) {
        const events: ProcessEvent[] = [];
        seen.push(events);
        done.push(new Promise((resolve) => subject.eventsAfter$(0).subscribe({ next: (event) => events.push(event), complete: () => resolve(undefined) })));
      }
      subject.append(outputBytes(seq, payload(seq)));
      if (seq % 9 === 0) await settle(undefined, seq % 4);
    }
    subject.append(closed(201));
    await Promise.all(done);
    for (const events of seen) expect(events).toEqual([...outputs(1, 200), closed(201)]);
    expect(await firstValueFrom(subject.eventsAfter$(150).pipe(toArray()))).toEqual([...outputs(151, 200), closed(201)]);
    expect(subject.subscriberCount).toBe(0);
    await subject.log.close();
  });

  it('replays asynchronously: nothing inside subscribe, then the replay, then live', async () => {
    const subject = await history();
    subject.append(output(1, 'a'));
    subject.append(output(2, 'b'));
    const events: ProcessEvent[] = [];
    subject.eventsAfter$(0).subscribe((event) => events.push(event));
    expect(events).toEqual([]);
    await settle(() => subject.subscriberCount === 1);
    expect(events).toEqual([output(1, 'a'), output(2, 'b')]);
    subject.append(exited(3, 0));
    expect(events).toEqual([output(1, 'a'), output(2, 'b'), exited(3, 0)]);
    subject.append(closed(4));
    await subject.log.close();
  });

  it('delivers a failure as a value, then completes, live and late', async () => {
    const subject = await history();
    subject.append(output(1, 'a'));
    const live = firstValueFrom(subject.eventsAfter$(0).pipe(toArray()));
    await settle(() => subject.subscriberCount === 1);
    subject.append(failed);
    subject.append(output(2, 'ignored'));
    expect(await live).toEqual([output(1, 'a'), failed]);
    expect(await firstValueFrom(subject.eventsAfter$(0).pipe(toArray()))).toEqual([output(1, 'a'), failed]);
    await subject.log.close();
  });

  it('skips live events up to an afterSeq beyond the last event', async () => {
    const subject = await history();
    subject.append(output(1, 'a'));
    const events = firstValueFrom(subject.eventsAfter$(3).pipe(toArray()));
    await settle(() => subject.subscriberCount === 1);
    for (let seq = 2; seq <= 5; seq += 1) subject.append(output(seq, String(seq)));
    subject.append(closed(6));
    expect(await events).toEqual([output(4, '4'), output(5, '5'), closed(6)]);
    await subject.log.close();
  });

  it('after release gives later subscribers a released marker instead of the replay; live events go on', async () => {
    const subject = await history();
    subject.append(output(1, 'ab'));
    const live = firstValueFrom(subject.eventsAfter$(0).pipe(toArray()));
    await settle(() => subject.subscriberCount === 1);
    subject.release();
    subject.append(output(2, 'cde'));
    expect({ start: subject.historyStartSeq, events: subject.retainedEvents, bytes: subject.retainedBytes }).toEqual({ start: 3, events: 0, bytes: 0 });
    const late = firstValueFrom(subject.eventsAfter$(0).pipe(toArray()));
    subject.append(closed(3));
    expect(await live).toEqual([output(1, 'ab'), output(2, 'cde'), closed(3)]);
    expect(await late).toEqual([truncatedRange('released', 1, 2, 5), closed(3)]);
    await subject.log.close();
  });

  it('gives a replay a writeFailed marker for what the disk refused, then goes live', async () => {
    const fs = new SpyFs();
    const subject = new DiskHistory(OutputLog.create(await tempDir(), 'p', { fs }));
    subject.append(output(1, 'kept'));
    await subject.log.flush();
    fs.failWrites = { path: (path) => path.endsWith('.seg'), code: 'ENOSPC' };
    subject.append(output(2, 'x'));
    await settle(() => subject.log.failure !== undefined);
    subject.append(output(3, 'yz'));
    const events: ProcessEvent[] = [];
    subject.eventsAfter$(0).subscribe((event) => events.push(event));
    await settle(() => subject.subscriberCount === 1);
    subject.append(closed(4));
    expect(events).toEqual([output(1, 'kept'), output(2, 'x'), truncatedRange('writeFailed', 3, 3, 2), closed(4)]);
    expect(subject.log.failure).toEqual(new OutputLogError('p', 'ENOSPC', 'write'));
    await subject.log.close();
  });
});

describe('diskHistories', () => {
  it('records a listed process\'s argv with its first metadata, from the launch the library passes', async () => {
    const store = await DiskLogStore.open({ dataDir: await tempDir(), totalBytes: 1 << 30 });
    const make = store.histories('env-8', { epoch: 1 });
    make('told', { argv: ['make', 'all'], tty: true });
    make('helper');
    expect({ told: await store.meta({ environmentId: 'env-8', processId: 'told' }), helper: await store.meta({ environmentId: 'env-8', processId: 'helper' }) }).toMatchObject({
      told: { argv: ['make', 'all'], tty: true },
      helper: { argv: [], tty: false },
    });
    await store.close();
  });

  it('is ready (the start may be sent) once the process\'s metadata, naming its argv, is on the disk', async () => {
    const dataDir = await tempDir();
    const store = await DiskLogStore.open({ dataDir, totalBytes: 1 << 30 });
    const made = store.histories('env-9', { epoch: 1 })('durable', { argv: ['make', 'all'], tty: false });
    const dir = processDir(dataDir, { environmentId: 'env-9', processId: 'durable' });
    await made.ready?.();
    expect(await readMeta(nodeLogFs, dir)).toMatchObject({ environmentId: 'env-9', processId: 'durable', argv: ['make', 'all'], state: 'running' });
    await store.close();
  });

  it('makes each process a log in the store under its environment, and records its end', async () => {
    const clock = new VirtualClock();
    const store = await DiskLogStore.open({ dataDir: await tempDir(), totalBytes: 1 << 30, scheduler: clock.scheduler });
    const histories = store.histories('env-7', { epoch: 1 });
    const make = (processId: string): ReturnType<typeof histories> => histories(processId, { argv: ['run', processId], tty: false });
    const ok = make('ok');
    const bad = make('bad');
    ok.append(output(1, 'hi'));
    ok.append(exited(2, 0));
    ok.append(closed(3));
    bad.append(output(1, 'oops'));
    bad.append(failed);
    expect(store.listNow().map(({ processId, argv, state, exitCode }) => ({ processId, argv, state, exitCode }))).toEqual([
      { processId: 'bad', argv: ['run', 'bad'], state: 'failed', exitCode: null },
      { processId: 'ok', argv: ['run', 'ok'], state: 'closed', exitCode: 0 },
    ]);
    const log = await store.openReader({ environmentId: 'env-7', processId: 'ok' });
    expect((await log?.read(0, 1000))?.events.map((event) => event.type)).toEqual(['output', 'exited', 'closed']);
    ok.release();
    expect((await store.meta({ environmentId: 'env-7', processId: 'ok' }))?.released).toBe(true);
    await store.close();
    expect(() => make('late')).toThrow('the output log store is closed');
  });
});
