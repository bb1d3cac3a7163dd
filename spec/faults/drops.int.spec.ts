/**
 * Fault injection: 20 seeded random network drops (held 50..700 ms each) while the real executor streams
 * 8 MiB of random bytes at about 200 KiB/s; every drop is recovered by adopting the executor's re-dial.
 * The bytes the host receives must hash to what the executor says it wrote, with seqs 1..n contiguous.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviorSubject, firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { ProcessEvent } from '../../src';
import { FAULT_SEED, PATH_ENV, currentRpc, drop, faultSetup, holdOutage, mulberry32, randomInt, redial } from './fault-kit';

const FILE_BUDGET_MS = 120_000;
jest.setTimeout(FILE_BUDGET_MS);

const TOTAL_BYTES = 8 * 1024 * 1024;
const BLOCK_BYTES = 32 * 1024;
/** 32 KiB every 0.16 s: 200 KiB/s, so 8 MiB take about 41 s plus fork overhead. */
const BLOCK_INTERVAL_S = 0.16;
const DROPS = 20;
const MIN_HOLD_MS = 50;
const MAX_HOLD_MS = 700;

/** What a subscriber saw of one process, kept small: a running hash instead of the bytes. */
interface StreamTally {
  readonly hash: ReturnType<typeof createHash>;
  stdoutBytes: number;
  stderr: string;
  readonly seqs: number[];
  readonly others: ProcessEvent[];
}

describe(`fault injection: random drops during a long stream [seed ${FAULT_SEED}]`, () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'exec-rx-faults-drops-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it(`delivers 8 MiB byte-exact, seqs contiguous and unique, across ${DROPS} drops of ${MIN_HOLD_MS}..${MAX_HOLD_MS} ms [seed ${FAULT_SEED}]`, async () => {
    const random = mulberry32(FAULT_SEED);
    const holds = Array.from({ length: DROPS }, () => randomInt(random, MIN_HOLD_MS, MAX_HOLD_MS));
    // Drop i fires once the host has received about (i + jitter) / (DROPS + 4) of the output: spread over
    // the whole stream, leaving the last part for the drops that run late.
    const thresholds = holds.map((_, i) => Math.floor((TOTAL_BYTES * (i + 0.5 + random() * 0.5)) / (DROPS + 4)));
    const context = `seed ${FAULT_SEED}, holds ${holds.join(',')} ms`;

    const setup = await faultSetup('env-faults-drops');
    const sent = join(work, 'sent.bin');
    const blocks = TOTAL_BYTES / BLOCK_BYTES;
    const script = `i=0; while [ $i -lt ${blocks} ]; do head -c ${BLOCK_BYTES} /dev/urandom; sleep ${BLOCK_INTERVAL_S}; i=$((i+1)); done | tee '${sent}'; sha256sum '${sent}' >&2`;
    const { process: proc } = await setup.environment.getExecBackend().start({ argv: ['/bin/sh', '-c', script], cwd: work, env: PATH_ENV });

    const tally: StreamTally = { hash: createHash('sha256'), stdoutBytes: 0, stderr: '', seqs: [], others: [] };
    const progress = new BehaviorSubject<number>(0);
    const ended = new Promise<void>((resolve) =>
      proc.events$.subscribe({
        next: (event) => {
          if ('seq' in event) tally.seqs.push(event.seq);
          if (event.type === 'output' && event.stream === 'stdout') {
            tally.hash.update(event.chunk);
            tally.stdoutBytes += event.chunk.byteLength;
            progress.next(tally.stdoutBytes);
          } else if (event.type === 'output') tally.stderr += Buffer.from(event.chunk).toString('utf8');
          else tally.others.push(event);
        },
        complete: () => {
          progress.complete();
          resolve();
        },
      }),
    );

    let dropsDone = 0;
    let socketsAdopted = 0;
    for (const [i, hold] of holds.entries()) {
      const reached = await firstValueFrom(progress.pipe(filter((bytes) => bytes >= (thresholds[i] ?? 0))), { defaultValue: -1 });
      if (reached < 0) break; // the stream ended first: reported below
      await drop(setup);
      await holdOutage(hold);
      socketsAdopted += await redial(setup);
      dropsDone += 1;
    }
    await ended;

    expect({ dropsDone, context }).toEqual({ dropsDone: DROPS, context });
    expect(socketsAdopted).toBeGreaterThanOrEqual(DROPS);
    expect(setup.proxy.connectionCount).toBe(1 + socketsAdopted);
    expect(tally.others.map((e) => (e.type === 'exited' ? `exited:${e.exitCode}` : e.type))).toEqual(['exited:0', 'closed']);
    expect(tally.stdoutBytes).toBe(TOTAL_BYTES);
    const [executorHash] = tally.stderr.trim().split(/\s+/);
    expect(executorHash).toMatch(/^[0-9a-f]{64}$/);
    expect(tally.hash.digest('hex')).toBe(executorHash);
    const firstBad = tally.seqs.findIndex((seq, i) => seq !== i + 1);
    expect({ firstBad, context }).toEqual({ firstBad: -1, context });
    expect(tally.others.at(-1)).toEqual({ type: 'closed', seq: tally.seqs.length });

    // Nothing left behind on the connection or in the client (a call answered after every earlier one first).
    await setup.environment.forceInfo();
    const rpc = currentRpc(setup.environment);
    expect({ routes: rpc.processRouteCount, pending: rpc.pendingCount, processes: setup.environment.client.processCount }).toEqual({ routes: 0, pending: 0, processes: 0 });
    expect(proc.retained.subscribers).toBe(0);
  });
});
