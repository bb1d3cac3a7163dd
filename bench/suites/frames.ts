/**
 * 2. The client ceiling: frames per second from the synthetic Node peer (pre-built `process/output`
 * frames written as fast as the socket takes them), at 8 KiB and at 128 B chunks, start → closed.
 */
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { withSyntheticPeer } from '../lib/peer-process';
import { RawClient } from '../lib/raw-client';
import { figure } from '../lib/report';
import type { Figure } from '../lib/report';
import { expectEqual, rawRun, rxConnect, rxEnvironment, rxRun } from '../lib/runs';
import type { ProcessRun } from '../lib/runs';
import { interleave, series } from '../lib/stats';

export async function framesSuite(context: BenchContext): Promise<Figure[]> {
  const cases = [
    { chunk: 8192, frames: sized(context, 24_000, 4_000), minRatio: 0.85, label: '8 KiB chunks' },
    { chunk: 128, frames: sized(context, 300_000, 40_000), minRatio: 0.55, label: '128 B chunks' },
  ];
  return withSyntheticPeer(async (url) => {
    const raw = await RawClient.dial(url, { ackPong: true });
    const manager = await rxConnect(url);
    try {
      const environment = rxEnvironment(manager);
      const figures: Figure[] = [];
      for (const c of cases) {
        context.log(`  ${c.label}: ${c.frames} frames per run`);
        const argv = ['synthetic', String(c.chunk), String(c.frames)];
        const measure = async (run: () => Promise<ProcessRun>): Promise<{ fps: number; mbps: number; cpuUs: number }> => {
          const cpu0 = process.cpuUsage();
          const result = await run();
          const cpu = process.cpuUsage(cpu0);
          expectEqual('frames', result.frames, c.frames);
          expectEqual('bytes', result.bytes, c.frames * c.chunk);
          return { fps: c.frames / (result.ms / 1000), mbps: result.bytes / 1e6 / (result.ms / 1000), cpuUs: (cpu.user + cpu.system) / c.frames };
        };
        const runs = await interleave(
          { raw: () => measure(() => rawRun(raw, argv)), rx: () => measure(() => rxRun(environment, argv)) },
          { runs: context.runs, warmup: 1, between: context.settle, log: context.log },
        );
        figures.push(
          figure({
            suite: 'frames (node peer)',
            label: `${c.label}, frames/s`,
            unit: 'frames/s',
            raw: series(runs.raw, 'fps'),
            rx: series(runs.rx, 'fps'),
            ratioGoal: { min: c.minRatio },
          }),
        );
        if (c.chunk === 8192) {
          figures.push(
            figure({ suite: 'frames (node peer)', label: `${c.label}, MB/s`, unit: 'MB/s', raw: series(runs.raw, 'mbps'), rx: series(runs.rx, 'mbps') }),
          );
        }
        figures.push(
          figure({
            suite: 'frames (node peer)',
            label: `${c.label}, client CPU per frame`,
            unit: 'µs',
            raw: series(runs.raw, 'cpuUs'),
            rx: series(runs.rx, 'cpuUs'),
            note: 'user + system CPU time of the bench process per frame (less sensitive to other load on the machine than frames/s)',
          }),
        );
      }
      return figures;
    } finally {
      raw.close();
      await manager.close();
    }
  });
}
