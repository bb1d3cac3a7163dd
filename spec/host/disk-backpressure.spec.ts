/**
 * The host pauses an executor only while a process's log cannot keep up with the disk: a log whose
 * unwritten backlog passes its high mark holds the environment's connection paused, and releases it
 * at the low mark; each pause is counted, and logged unless another was logged less than 10 s before
 * (those are summed into the next line), and the hold goes when the log ends.
 */
import { Subject } from 'rxjs';
import type { Subscription } from 'rxjs';
import { ConnectionFlow } from '../../src/rpc/connection-flow';
import { holdWhileBehind } from '../../src/host/disk-backpressure';
import type { DiskPauseLog } from '../../src/host/disk-backpressure';
import { watchPressure } from '../../src/store/disk/log-pressure';
import type { LogPressure } from '../../src/store/log-store';
import { BufferPool } from '../../src/store/disk/log/buffer-pool';
import { OutputLog } from '../../src/store/disk/log/output-log';
import { RECORD_HEADER_BYTES } from '../../src/store/disk/log/record';
import { outputBytes } from '../exec/event-builders';
import { removeTempDirs, settle, SpyFs, tempDir } from '../store/disk/log-support';

afterEach(removeTempDirs);

const PAYLOAD = 100;

/**
 * What a host runs for its logs: each log's pressure as the store reports it (`watchPressure`), held on
 * `flow` (`holdWhileBehind`, which says each line as the host's environment log would). Returns each log's
 * watch (closed once that log takes no more appends) and the hold's subscription.
 */
function pauseWhileBehind(logs: readonly OutputLog[], flow: ConnectionFlow, say: (line: string) => void, pauses: DiskPauseLog): { readonly watching: Subscription[]; readonly holding: Subscription } {
  const pressure = new Subject<LogPressure>();
  const holding = holdWhileBehind(pressure, () => flow, (_environmentId, line) => say(line), pauses);
  const watching = logs.map((log) => watchPressure(log, { environmentId: 'env-1', processId: log.processId }, (change) => pressure.next(change)));
  return { watching, holding };
}
const RECORD = RECORD_HEADER_BYTES + PAYLOAD;

describe('pauseWhileBehind', () => {
  it('holds the connection paused from the high mark to the low mark, says so, and counts it', async () => {
    const fs = new SpyFs();
    fs.holdWrites = true;
    const log = OutputLog.create(await tempDir(), 'p-slow', { fs, highWaterBytes: 10 * RECORD, lowWaterBytes: 4 * RECORD, pool: new BufferPool(2 * RECORD, 2) });
    const flow = new ConnectionFlow();
    const said: string[] = [];
    const count = { pauses: 0 };
    const { watching: [watching], holding } = pauseWhileBehind([log], flow, (line) => said.push(line), { count, now: () => 0 });

    log.append(outputBytes(1, new Uint8Array(PAYLOAD)));
    log.append(outputBytes(2, new Uint8Array(PAYLOAD)));
    await settle(() => fs.heldWrites === 1); // the write of records 1-2 started, and waits
    for (let seq = 3; seq <= 9; seq += 1) log.append(outputBytes(seq, new Uint8Array(PAYLOAD)));
    expect({ holds: flow.holds, pauses: count.pauses }).toEqual({ holds: 0, pauses: 0 });
    log.append(outputBytes(10, new Uint8Array(PAYLOAD)));
    expect({ holds: flow.holds, pauses: count.pauses }).toEqual({ holds: 1, pauses: 1 });
    expect(said).toEqual([`process p-slow: pausing its executor, the output log is ${10 * RECORD} bytes behind the disk`]);

    // Records 1-2 written: 8 behind, above the low mark: still paused.
    fs.releaseWrite();
    await settle(() => log.backlogBytes === 8 * RECORD);
    expect(flow.holds).toBe(1);
    // The next write takes records 3-10 (four buffers) in one call: below the low mark, resumed.
    await settle(() => fs.heldWrites === 1);
    fs.releaseWrite();
    await settle(() => log.backlogBytes === 0);
    expect({ holds: flow.holds, pauses: count.pauses }).toEqual({ holds: 0, pauses: 1 });
    expect(said).toHaveLength(2);
    expect(said[1]).toBe('process p-slow: the output log caught up, executor resumed');

    fs.holdWrites = false;
    fs.releaseWrite();
    await log.close();
    expect(watching?.closed).toBe(true);
    holding.unsubscribe();
  });

  it('releases its hold when the log ends while behind', async () => {
    const fs = new SpyFs();
    fs.holdWrites = true;
    const log = OutputLog.create(await tempDir(), 'p-end', { fs, highWaterBytes: 2 * RECORD, lowWaterBytes: RECORD, pool: new BufferPool(2 * RECORD, 2) });
    const flow = new ConnectionFlow();
    const { watching: [watching], holding } = pauseWhileBehind([log], flow, () => undefined, { count: { pauses: 0 }, now: () => 0 });
    for (let seq = 1; seq <= 3; seq += 1) log.append(outputBytes(seq, new Uint8Array(PAYLOAD)));
    expect(flow.holds).toBe(1);
    const closing = log.close();
    fs.holdWrites = false;
    while (fs.heldWrites > 0) fs.releaseWrite();
    await closing;
    expect({ holds: flow.holds, closed: watching?.closed }).toEqual({ holds: 0, closed: true });
    holding.unsubscribe();
  });

  it('counts every pause but says one per quiet period, naming the pauses it did not say', async () => {
    const clock = { at: 1_000_000 };
    const pauses: DiskPauseLog = { count: { pauses: 0 }, now: () => clock.at };
    const said: string[] = [];
    const flow = new ConnectionFlow();
    // Two logs (two processes) share the host's pause log, as the environments of a host do.
    const fs = new SpyFs();
    fs.holdWrites = true;
    const logs = await Promise.all(['p-a', 'p-b'].map(async (id) => OutputLog.create(await tempDir(), id, { fs, highWaterBytes: 2 * RECORD, lowWaterBytes: RECORD, pool: new BufferPool(2 * RECORD, 4) })));
    const { watching, holding } = pauseWhileBehind(logs, flow, (line) => said.push(line), pauses);
    const seqs = new Map<OutputLog, number>();
    /** One pause of `log`: its first write held, records queued behind it past the high mark (2 records), then all of it written. */
    const pauseOnce = async (log: OutputLog): Promise<void> => {
      const writesBefore = fs.segmentWrites;
      for (let i = 0; i < 3; i += 1) {
        const seq = (seqs.get(log) ?? 0) + 1;
        seqs.set(log, seq);
        log.append(outputBytes(seq, new Uint8Array(PAYLOAD)));
        if (i === 0) await settle(() => fs.heldWrites === 1);
      }
      expect(flow.holds).toBe(1);
      while (fs.segmentWrites < writesBefore + 2) {
        await settle(() => fs.heldWrites === 1);
        fs.releaseWrite();
        await settle(() => fs.heldWrites === 1 || log.backlogBytes === 0);
      }
      await settle(() => log.backlogBytes === 0);
      expect(flow.holds).toBe(0);
    };
    const [a, b] = logs;
    if (a === undefined || b === undefined) throw new Error('two logs');

    await pauseOnce(a); // said, with its resume
    clock.at += 4_000;
    await pauseOnce(b); // 4 s later: counted, not said
    clock.at += 5_000;
    await pauseOnce(a); // 9 s after the last said: counted, not said
    clock.at += 1_000;
    await pauseOnce(b); // 10 s after: said, naming the two before it
    expect(pauses.count.pauses).toBe(4);
    expect(said).toEqual([
      `process p-a: pausing its executor, the output log is ${2 * RECORD} bytes behind the disk`,
      'process p-a: the output log caught up, executor resumed',
      `process p-b: pausing its executor, the output log is ${2 * RECORD} bytes behind the disk (2 shorter pauses since the last said)`,
      'process p-b: the output log caught up, executor resumed',
    ]);
    fs.holdWrites = false;
    while (fs.heldWrites > 0) fs.releaseWrite();
    for (const log of logs) await log.close();
    expect(watching.map((w) => w.closed)).toEqual([true, true]);
    holding.unsubscribe();
  });
});
