/**
 * 1. Output throughput through a listening executor: `head -c 100000000 /dev/zero` streamed to the
 * consumer (decoded bytes counted), MB/s = 10^6 bytes per second, start → closed.
 */
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { withListening } from '../lib/executors';
import { RawClient } from '../lib/raw-client';
import { figure } from '../lib/report';
import type { Row } from '../lib/report';
import { expectEqual, rawRun, rxConnect, rxEnvironment, rxRun } from '../lib/runs';
import { interleave, series } from '../lib/stats';

export async function throughputSuite(context: BenchContext): Promise<Row[]> {
  const bytes = sized(context, 100_000_000, 20_000_000);
  const argv = ['head', '-c', String(bytes), '/dev/zero'];
  return withListening(1, async ([url = '']) => {
    const raw = await RawClient.dial(url, { ackPong: true });
    const manager = await rxConnect(url);
    try {
      const environment = rxEnvironment(manager);
      const measure = async (run: () => Promise<{ ms: number; bytes: number; frames: number }>): Promise<{ mbps: number; cpuUs: number }> => {
        const cpu0 = process.cpuUsage();
        const result = await run();
        const cpu = process.cpuUsage(cpu0);
        expectEqual('output bytes', result.bytes, bytes);
        return { mbps: bytes / 1e6 / (result.ms / 1000), cpuUs: (cpu.user + cpu.system) / result.frames };
      };
      const runs = await interleave(
        { raw: () => measure(() => rawRun(raw, argv)), rx: () => measure(() => rxRun(environment, argv)), ctl: () => measure(() => rawRun(raw, argv)) },
        // Cheap (about 1 s a pair), and the executor's pace varies with the machine's load: more pairs.
        { runs: context.quick ? context.runs : Math.max(context.runs, 15), warmup: 1, between: context.settle, log: context.log },
      );
      return [
        figure({
          suite: 'throughput',
          label: `${bytes / 1e6} MB output via listening executor`,
          unit: 'MB/s',
          raw: series(runs.raw, 'mbps'),
          rx: series(runs.rx, 'mbps'),
          ctl: series(runs.ctl, 'mbps'),
          ratioGoal: { min: 0.95 },
        }),
        figure({
          suite: 'throughput',
          label: 'client CPU per frame',
          unit: 'µs',
          raw: series(runs.raw, 'cpuUs'),
          rx: series(runs.rx, 'cpuUs'),
          ctl: series(runs.ctl, 'cpuUs'),
          note: 'user + system CPU time of the bench process per process/output frame; the executor, not the client, sets the pace here',
        }),
      ];
    } finally {
      raw.close();
      await manager.close();
    }
  });
}
