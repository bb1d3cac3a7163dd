/**
 * 4. Request round trip: `environment/status`, sequentially (p50 and p99 of each turn's requests) and
 * with 64 in flight (requests per second). Against the listening executor (it runs one request at a
 * time per connection, `--concurrent-requests 1`), and against the synthetic Node peer, where the
 * client's own cost per request shows.
 */
import { performance } from 'node:perf_hooks';
import type { EnvironmentManager } from '../../src';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { withListening } from '../lib/executors';
import { withSyntheticPeer } from '../lib/peer-process';
import { RawClient } from '../lib/raw-client';
import { figure } from '../lib/report';
import type { Figure, Row } from '../lib/report';
import { BENCH_ENV, rxConnect } from '../lib/runs';
import { interleave, percentile, series } from '../lib/stats';
import type { Metrics } from '../lib/stats';

type Ask = () => Promise<void>;

async function turn(ask: Ask, sequential: number, concurrent: number, inFlight: number): Promise<Metrics> {
  const times: number[] = [];
  for (let i = 0; i < sequential; i += 1) {
    const t0 = performance.now();
    await ask();
    times.push((performance.now() - t0) * 1000);
  }
  times.sort((a, b) => a - b);
  let issued = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (issued < concurrent) {
        issued += 1;
        await ask();
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { p50: percentile(times, 50), p99: percentile(times, 99), rps: concurrent / seconds };
}

const rawAsk = (client: RawClient): Ask => async () => {
  const result = (await client.request('environment/status')) as { status?: string } | null;
  if (result?.status !== 'ready') throw new Error(`environment/status answered ${JSON.stringify(result)}`);
};

const rxAsk = (manager: EnvironmentManager): Ask => async () => {
  const status = await manager.getEnvironmentStatus(BENCH_ENV);
  if (status?.status !== 'ready') throw new Error(`environment status ${JSON.stringify(status)}`);
};

async function measure(context: BenchContext, url: string, target: string): Promise<Figure[]> {
  const sequential = sized(context, 2_000, 300);
  const concurrent = sized(context, 20_000, 3_000);
  const raw = await RawClient.dial(url, { ackPong: true });
  const manager = await rxConnect(url);
  try {
    context.log(`  ${target}: ${sequential} sequential + ${concurrent} with 64 in flight per turn`);
    const runs = await interleave(
      { raw: () => turn(rawAsk(raw), sequential, concurrent, 64), rx: () => turn(rxAsk(manager), sequential, concurrent, 64), ctl: () => turn(rawAsk(raw), sequential, concurrent, 64) },
      { runs: context.runs, warmup: 1, between: context.settle, log: context.log },
    );
    const suite = `status RTT (${target})`;
    const of = (metric: string): { raw: number[]; rx: number[]; ctl: number[] } => ({ raw: series(runs.raw, metric), rx: series(runs.rx, metric), ctl: series(runs.ctl, metric) });
    return [
      figure({ suite, label: 'sequential p50', unit: 'µs', ...of('p50'), diffGoal: { max: 15 } }),
      figure({ suite, label: 'sequential p99', unit: 'µs', ...of('p99') }),
      figure({ suite, label: '64 in flight', unit: 'req/s', ...of('rps'), ratioGoal: { min: 0.92 } }),
    ];
  } finally {
    raw.close();
    await manager.close();
  }
}

export async function rttSuite(context: BenchContext): Promise<Row[]> {
  const executor = await withListening(1, ([url = '']) => measure(context, url, 'executor'));
  const peer = await withSyntheticPeer((url) => measure(context, url, 'node peer'));
  return [...executor, ...peer];
}
