/**
 * 6. Scale: (a) 100 concurrent processes on one environment, 1 MB of output each; (b) 10 environments
 * (10 listening executors) at once, 100 concurrent processes each, 100 kB of output each. Reports the
 * total MB/s (all output over the wall time from the first start to the last `closed`) and the worst
 * per-process latency (a process's own start → closed).
 */
import { performance } from 'node:perf_hooks';
import type { EnvironmentManager } from '../../src';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { withListening } from '../lib/executors';
import { RawClient } from '../lib/raw-client';
import { figure } from '../lib/report';
import type { Figure, Row } from '../lib/report';
import { at, expectEqual, rawRun, rxConnect, rxEnvironment, rxRun } from '../lib/runs';
import type { ProcessRun } from '../lib/runs';
import { interleave, median, series } from '../lib/stats';
import type { Metrics } from '../lib/stats';

async function turn(environments: number, perEnvironment: number, bytesEach: number, run: (environment: number) => Promise<ProcessRun>): Promise<Metrics> {
  const t0 = performance.now();
  const runs = await Promise.all(Array.from({ length: environments * perEnvironment }, (_v, i) => run(i % environments)));
  const seconds = (performance.now() - t0) / 1000;
  let total = 0;
  for (const r of runs) {
    expectEqual('output bytes of a process', r.bytes, bytesEach);
    total += r.bytes;
  }
  const latencies = runs.map((r) => r.ms);
  return { mbps: total / 1e6 / seconds, worstMs: Math.max(...latencies), p50Ms: median(latencies) };
}

async function scenario(context: BenchContext, environments: number, perEnvironment: number, bytesEach: number): Promise<Figure[]> {
  const argv = ['head', '-c', String(bytesEach), '/dev/zero'];
  const label = environments === 1 ? `${perEnvironment} processes × ${bytesEach / 1e6} MB, 1 environment` : `${environments} environments × ${perEnvironment} processes × ${bytesEach / 1e6} MB`;
  context.log(`  ${label}`);
  return withListening(environments, async (urls) => {
    const raws: RawClient[] = [];
    const managers: EnvironmentManager[] = [];
    try {
      for (const url of urls) {
        raws.push(await RawClient.dial(url, { ackPong: true }));
        managers.push(await rxConnect(url));
      }
      const envs = managers.map(rxEnvironment);
      const runs = await interleave(
        {
          raw: () => turn(environments, perEnvironment, bytesEach, (e) => rawRun(at(raws, e), argv)),
          rx: () => turn(environments, perEnvironment, bytesEach, (e) => rxRun(at(envs, e), argv)),
          ctl: () => turn(environments, perEnvironment, bytesEach, (e) => rawRun(at(raws, e), argv)),
        },
        { runs: context.runs, warmup: 1, between: context.settle, log: context.log },
      );
      return [
        figure({ suite: 'scale', label: `${label}: total`, unit: 'MB/s', raw: series(runs.raw, 'mbps'), rx: series(runs.rx, 'mbps'), ctl: series(runs.ctl, 'mbps') }),
        figure({
          suite: 'scale',
          label: `${label}: worst start→closed`,
          unit: 'ms',
          raw: series(runs.raw, 'worstMs'),
          rx: series(runs.rx, 'worstMs'),
          ctl: series(runs.ctl, 'worstMs'),
          note: `median process start→closed: raw ${median(series(runs.raw, 'p50Ms')).toFixed(1)} ms, exec-rx ${median(series(runs.rx, 'p50Ms')).toFixed(1)} ms`,
        }),
      ];
    } finally {
      for (const raw of raws) raw.close();
      await Promise.all(managers.map((manager) => manager.close()));
    }
  });
}

export async function scaleSuite(context: BenchContext): Promise<Row[]> {
  const one = await scenario(context, 1, sized(context, 100, 20), 1_000_000);
  const ten = await scenario(context, 10, sized(context, 100, 10), 100_000);
  return [...one, ...ten];
}
