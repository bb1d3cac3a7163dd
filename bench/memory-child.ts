/**
 * A memory probe, run in a fresh process (`node --expose-gc memory-child.js MODE URL`) so that nothing
 * else the bench did is on its heap. Prints one JSON line with what it measured.
 *
 * - `stream-raw` / `stream-rx`: idle resident memory after connecting and a small warm-up stream (then
 *   GC), then the peak while streaming BYTES of output (exec-rx through `events$`, its history at the
 *   default bound of 256 events / 1 MiB the whole time), sampled every 32 frames and every 5 ms.
 * - `procs-raw` / `procs-rx`: heap + external memory and RSS after GC, before and after running COUNT
 *   `/bin/echo hello` processes whose results are all kept (exec-rx: the ExecProcess objects with their
 *   history; raw: every event with its decoded chunk). Reported per process.
 */
import { performance } from 'node:perf_hooks';
import type { ExecProcess } from '../src';
import { RawClient } from './lib/raw-client';
import { pool, rawRun, rxConnect, rxEnvironment, rxRun } from './lib/runs';

const [mode = '', url = '', amountText = '0'] = process.argv.slice(2);
const amount = Number(amountText);
const gc = (globalThis as { gc?: () => void }).gc;

async function settle(): Promise<void> {
  for (let i = 0; i < 4; i += 1) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let peak = 0;
const sample = (): void => {
  const rss = process.memoryUsage.rss();
  if (rss > peak) peak = rss;
};

async function stream(side: 'raw' | 'rx'): Promise<Record<string, number>> {
  const warmArgv = ['head', '-c', '4000000', '/dev/zero'];
  const argv = ['head', '-c', String(amount), '/dev/zero'];
  let frames = 0;
  const onFrame = (): void => {
    frames += 1;
    if ((frames & 31) === 0) sample();
  };
  let run: (a: readonly string[]) => Promise<unknown>;
  let close: () => Promise<void>;
  if (side === 'raw') {
    const client = await RawClient.dial(url, { ackPong: true });
    run = (a) => rawRun(client, a, onFrame);
    close = async () => client.close();
  } else {
    const manager = await rxConnect(url);
    const environment = rxEnvironment(manager);
    run = (a) => rxRun(environment, a, { onOutput: onFrame });
    close = () => manager.close();
  }
  await run(warmArgv);
  await settle();
  const idleUsage = process.memoryUsage();
  const idle = idleUsage.rss;
  peak = idle;
  let peakHeapTotal = idleUsage.heapTotal;
  let peakExternal = idleUsage.external;
  const detail = setInterval(() => {
    const usage = process.memoryUsage();
    if (usage.heapTotal > peakHeapTotal) peakHeapTotal = usage.heapTotal;
    if (usage.external > peakExternal) peakExternal = usage.external;
  }, 20);
  const timer = setInterval(sample, 5);
  const t0 = performance.now();
  await run(argv);
  const ms = performance.now() - t0;
  clearInterval(timer);
  clearInterval(detail);
  sample();
  await settle();
  const afterUsage = process.memoryUsage();
  await close();
  return {
    idleRss: idle,
    peakRss: peak,
    afterRss: afterUsage.rss,
    growth: peak - idle,
    ms,
    heapTotalGrowth: peakHeapTotal - idleUsage.heapTotal,
    externalGrowth: peakExternal - idleUsage.external,
    heapTotalAfter: afterUsage.heapTotal - idleUsage.heapTotal,
    heapUsedAfter: afterUsage.heapUsed - idleUsage.heapUsed,
  };
}

async function procs(side: 'raw' | 'rx'): Promise<Record<string, number>> {
  const argv = ['/bin/echo', 'hello'];
  const keptRaw: { events: unknown[] }[] = [];
  const keptRx: ExecProcess[] = [];
  let runOne: (keep: boolean) => Promise<unknown>;
  let close: () => Promise<void>;
  if (side === 'raw') {
    const client = await RawClient.dial(url, { ackPong: true });
    runOne = (keep) => {
      const record = { events: [] as unknown[] };
      if (keep) keptRaw.push(record);
      return rawRun(client, argv, (event) => record.events.push(event));
    };
    close = async () => client.close();
  } else {
    const manager = await rxConnect(url);
    const environment = rxEnvironment(manager);
    runOne = (keep) => rxRun(environment, argv, { keep: (proc) => (keep ? keptRx.push(proc) : proc.release()) });
    close = () => manager.close();
  }
  await pool(100, 16, () => runOne(false));
  await settle();
  const before = process.memoryUsage();
  await pool(amount, 16, () => runOne(true));
  await settle();
  const after = process.memoryUsage();
  const kept = keptRaw.length + keptRx.length;
  if (kept !== amount) throw new Error(`kept ${kept} of ${amount} processes`);
  const heapDelta = after.heapUsed + after.external - (before.heapUsed + before.external);
  const result = { bytesPerProcess: heapDelta / amount, rssPerProcess: (after.rss - before.rss) / amount, heapDelta, rssDelta: after.rss - before.rss };
  await close();
  return result;
}

async function main(): Promise<void> {
  if (gc === undefined) throw new Error('run with --expose-gc');
  const side = mode.endsWith('-rx') ? 'rx' : 'raw';
  const result = mode.startsWith('stream') ? await stream(side) : await procs(side);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`memory probe ${mode} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
