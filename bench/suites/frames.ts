/**
 * 2. The client ceiling: frames per second from the synthetic Node peer (pre-built `process/output`
 * frames written as fast as the socket takes them), at 8 KiB and at 128 B chunks, start → closed. The
 * floor beside them: JSON.parse + base64 decode of the same frames in this process (`../lib/floor`).
 */
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { measureFloor } from '../lib/floor';
import { withSyntheticPeer } from '../lib/peer-process';
import { RawClient } from '../lib/raw-client';
import { figure } from '../lib/report';
import type { Row } from '../lib/report';
import { expectEqual, rawRun, rxConnect, rxEnvironment, rxRun } from '../lib/runs';
import type { ProcessRun } from '../lib/runs';
import { interleave, series } from '../lib/stats';

const NOTE = 'user + system CPU time of the bench process per frame (less sensitive to other load on the machine than frames/s); floor: CPU time of the bare parse + decode';

export async function framesSuite(context: BenchContext): Promise<Row[]> {
  const cases = [
    { chunk: 8192, frames: sized(context, 24_000, 4_000), minRatio: 0.95, maxCpu: 1.06, label: '8 KiB chunks' },
    { chunk: 128, frames: sized(context, 300_000, 40_000), minRatio: 0.85, maxCpu: 1.2, label: '128 B chunks' },
  ];
  return withSyntheticPeer(async (url) => {
    const raw = await RawClient.dial(url, { ackPong: true });
    const manager = await rxConnect(url);
    try {
      const environment = rxEnvironment(manager);
      const rows: Row[] = [];
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
        const floor = (): Promise<{ fps: number; mbps: number; cpuUs: number }> => {
          const f = measureFloor(c.chunk, c.frames);
          return Promise.resolve({ ...f, mbps: (f.fps * c.chunk) / 1e6 });
        };
        const runs = await interleave(
          { raw: () => measure(() => rawRun(raw, argv)), rx: () => measure(() => rxRun(environment, argv)), ctl: () => measure(() => rawRun(raw, argv)), floor },
          { runs: context.runs, warmup: 1, between: context.settle, log: context.log },
        );
        const of = (metric: string): { raw: number[]; rx: number[]; ctl: number[]; floor: number[] } => ({
          raw: series(runs.raw, metric),
          rx: series(runs.rx, metric),
          ctl: series(runs.ctl, metric),
          floor: series(runs.floor, metric),
        });
        const suite = 'frames (node peer)';
        rows.push(figure({ suite, label: `${c.label}, frames/s`, unit: 'frames/s', ...of('fps'), ratioGoal: { min: c.minRatio } }));
        if (c.chunk === 8192) rows.push(figure({ suite, label: `${c.label}, MB/s`, unit: 'MB/s', ...of('mbps') }));
        rows.push(figure({ suite, label: `${c.label}, client CPU per frame`, unit: 'µs', ...of('cpuUs'), ratioGoal: { max: c.maxCpu }, note: NOTE }));
      }
      return rows;
    } finally {
      raw.close();
      await manager.close();
    }
  });
}
