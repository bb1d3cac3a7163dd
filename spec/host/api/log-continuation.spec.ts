/**
 * A follower of a process a restarted host found `unknown` (running when it stopped), in process: the
 * store over a temp dir holds its log of before, a fake stands for the host's environments (is the
 * executor awaited, and when does the take-back settle), and the SSE stream writes to an in-memory
 * response. The follower reads the log, then waits while the executor is awaited: it reads on in the
 * log that takes the process's appends once it is taken back, or ends `failed` PROCESS_GONE when it is
 * lost or not awaited; a client gone meanwhile stops the wait.
 */
import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { Observable } from 'rxjs';
import { of, Subject, take } from 'rxjs';
import type { TakeBackWatch } from '../../../src/host/api/log-continuation';
import { afterLogEnd, UNKNOWN_END } from '../../../src/host/api/log-continuation';
import { streamLogEvents } from '../../../src/host/api/log-event-stream';
import { SseStream } from '../../../src/host/api/sse-stream';
import type { OutputLog } from '../../../src/store/disk/log/output-log';
import { DiskLogStore } from '../../../src/store/disk/disk-log-store';
import type { ProcessKey } from '../../../src/store/process-meta';
import { closed, exited, output } from '../../exec/event-builders';
import type { SseFrame } from '../../support/sse-parser';
import { SseParser } from '../../support/sse-parser';
import { removeTempDirs, settle, tempDir, VirtualClock } from '../../store/disk/log-support';

afterEach(removeTempDirs);

const KEY: ProcessKey = { environmentId: 'env-1', processId: 'p-1' };

/** The host's environments as the follower sees them: awaited until `settle()`, or not at all. */
class FakeEnvironments implements TakeBackWatch {
  private readonly settled = new Subject<void>();
  waits = 0;

  constructor(private readonly awaited: boolean) {}

  get waiting(): boolean {
    return this.settled.observed;
  }

  takeBackSettled(): Observable<void> {
    if (!this.awaited) return of(undefined);
    this.waits += 1;
    return this.settled.pipe(take(1));
  }

  settle(): void {
    this.settled.next();
  }
}

/** A store whose process `KEY` wrote seqs 1..3 and was running when the host stopped: reopened, it is `unknown`. */
async function restartedStore(): Promise<DiskLogStore> {
  const options = { dataDir: await tempDir(), scheduler: new VirtualClock().scheduler, totalBytes: 1 << 30 };
  const before = await DiskLogStore.open(options);
  const log = before.create(KEY, { argv: ['sh'], tty: false });
  for (let seq = 1; seq <= 3; seq += 1) log.append(output(seq, `line ${seq}\n`));
  await log.flush();
  await before.close();
  return DiskLogStore.open(options);
}

/** Follows `KEY` from seq 0 in `store`; the frames it got, whether it ended, and a way to go away. */
async function follow(store: DiskLogStore, environments: TakeBackWatch): Promise<{ readonly frames: SseFrame[]; ended(): boolean; leave(): void; readonly log: OutputLog }> {
  const log = await store.openReader(KEY);
  if (log === undefined) throw new Error('the store holds the process');
  const res = new PassThrough();
  const frames: SseFrame[] = [];
  const parser = new SseParser({ frame: (frame) => frames.push(frame) });
  res.on('data', (chunk: Buffer) => parser.push(chunk));
  // The stream uses only what a PassThrough has of a response: write, end, writableLength, close and drain.
  const stream = new SseStream(res as unknown as ServerResponse, 'token', 1 << 20);
  streamLogEvents(log, stream, 0, { follow: true, afterEnd: afterLogEnd(environments, store, KEY) });
  return { frames, ended: () => stream.isEnded, leave: () => res.destroy(), log };
}

const names = (frames: readonly SseFrame[]): string[] => frames.map((frame) => `${frame.event} ${frame.id ?? ''}`.trim());

describe('a follower of a process found unknown after a host restart', () => {
  it('waits at the end of its log while the executor is awaited, then reads on in the log the process was taken back into', async () => {
    const store = await restartedStore();
    const environments = new FakeEnvironments(true);
    const follower = await follow(store, environments);
    await settle(() => environments.waiting);
    expect({ frames: names(follower.frames), ended: follower.ended() }).toEqual({ frames: ['output 1', 'output 2', 'output 3'], ended: false });

    expect(await store.adopt(KEY, 1)).toBe(3);
    expect(await store.openReader(KEY)).not.toBe(follower.log);
    environments.settle();
    const adopted = store.histories(KEY.environmentId, { epoch: 1 })(KEY.processId);
    adopted.append(output(4, 'line 4\n'));
    adopted.append(exited(5, 3));
    adopted.append(closed(6));
    await settle(() => follower.ended());
    expect(names(follower.frames)).toEqual(['output 1', 'output 2', 'output 3', 'output 4', 'exited 5', 'closed 6']);
    expect(JSON.parse(follower.frames[4]?.data ?? '{}')).toMatchObject({ exitCode: 3 });
    await store.close();
  });

  it('ends with failed PROCESS_GONE, saying why, once the take-back found the process lost', async () => {
    const store = await restartedStore();
    const environments = new FakeEnvironments(true);
    const follower = await follow(store, environments);
    await settle(() => environments.waiting);
    await store.markLost(KEY, 'the executor no longer has session s-1');
    environments.settle();
    await settle(() => follower.ended());
    expect(names(follower.frames)).toEqual(['output 1', 'output 2', 'output 3', 'failed']);
    expect(JSON.parse(follower.frames[3]?.data ?? '{}')).toEqual({ code: 'PROCESS_GONE', message: 'it was running when the host stopped and could not be taken back: the executor no longer has session s-1' });
    await store.close();
  });

  it('ends with failed PROCESS_GONE at the end of its log when no executor is awaited (or the wait ran out)', async () => {
    const store = await restartedStore();
    const follower = await follow(store, new FakeEnvironments(false));
    await settle(() => follower.ended());
    expect(names(follower.frames)).toEqual(['output 1', 'output 2', 'output 3', 'failed']);
    expect(JSON.parse(follower.frames[3]?.data ?? '{}')).toEqual({ code: 'PROCESS_GONE', message: UNKNOWN_END });
    await store.close();
  });

  it('stops waiting when its client goes away', async () => {
    const store = await restartedStore();
    const environments = new FakeEnvironments(true);
    const follower = await follow(store, environments);
    await settle(() => environments.waiting);
    follower.leave();
    await settle(() => !environments.waiting);
    expect({ waiting: environments.waiting, ended: follower.ended(), waits: environments.waits }).toEqual({ waiting: false, ended: true, waits: 1 });
    await store.close();
  });
});
