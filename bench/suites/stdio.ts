/**
 * 12. The stdio transport (issue 32), `--only=stdio`: `head -c 200000000 /dev/zero` through
 * `codex exec-server --listen stdio`, MB/s of decoded output from just before `process/start` to
 * `closed`. Four turns per run, order rotating: exec-rx over stdio (`EnvironmentManager.fromStdio`, what
 * `exec-rx run --stdio` uses), the bare stdio consumer (`../lib/raw-stdio-client`), exec-rx over a
 * listening executor's WebSocket (what `run --connect` uses), and a second bare stdio turn (the control
 * pair). Each side has its own executor, started once. Figures: exec-rx stdio / bare stdio (what exec-rx
 * adds on stdio), and exec-rx stdio / exec-rx ws (goal ≥ 0.9×, issue 32), with the bare ws client beside;
 * the bench process's CPU per MB for each.
 */
import { EnvironmentManager } from '../../src';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { trackCloser, withListening } from '../lib/executors';
import { RawClient } from '../lib/raw-client';
import { RawStdioClient } from '../lib/raw-stdio-client';
import { figure } from '../lib/report';
import type { Row } from '../lib/report';
import { expectEqual, rawRun, rxConnect, rxEnvironment, rxRun } from '../lib/runs';
import type { ProcessRun } from '../lib/runs';
import { interleave, series } from '../lib/stats';

/** exec-rx on a stdio executor of its own, as `exec-rx run --stdio` builds it; `close()` stops both. */
async function rxStdio(): Promise<{ readonly manager: EnvironmentManager; close(): Promise<void> }> {
  const executor = await spawnExecutor({ mode: 'stdio' });
  trackCloser({ close: () => executor.stop() });
  try {
    const manager = await EnvironmentManager.fromStdio('bench', executor.child, { clientName: 'bench-rx', keepalive: false });
    return {
      manager,
      close: async () => {
        await manager.close();
        await executor.stop();
      },
    };
  } catch (error) {
    await executor.stop();
    throw error;
  }
}

export async function stdioSuite(context: BenchContext): Promise<Row[]> {
  const bytes = sized(context, 200_000_000, 20_000_000);
  const argv = ['head', '-c', String(bytes), '/dev/zero'];
  return withListening(1, async ([url = '']) => {
    const rawWs = await RawClient.dial(url, { ackPong: true });
    const wsManager = await rxConnect(url);
    const raw = await RawStdioClient.spawn();
    const stdio = await rxStdio();
    try {
      const wsEnvironment = rxEnvironment(wsManager);
      const stdioEnvironment = rxEnvironment(stdio.manager);
      const measure = async (run: () => Promise<ProcessRun>): Promise<{ mbps: number; cpuUsPerMb: number }> => {
        const cpu0 = process.cpuUsage();
        const result = await run();
        const cpu = process.cpuUsage(cpu0);
        expectEqual('output bytes', result.bytes, bytes);
        return { mbps: bytes / 1e6 / (result.ms / 1000), cpuUsPerMb: (cpu.user + cpu.system) / (bytes / 1e6) };
      };
      const runs = await interleave(
        {
          raw: () => measure(() => rawRun(raw, argv)),
          rx: () => measure(() => rxRun(stdioEnvironment, argv)),
          ws: () => measure(() => rxRun(wsEnvironment, argv)),
          rawWs: () => measure(() => rawRun(rawWs, argv)),
          ctl: () => measure(() => rawRun(raw, argv)),
        },
        { runs: context.runs, warmup: 1, between: context.settle, log: context.log },
      );
      const suite = 'stdio';
      const size = `${bytes / 1e6} MB`;
      const cpuNote = 'user + system CPU time of the bench process per MB of output (the executor and head are not counted)';
      return [
        figure({
          suite,
          label: `${size} output, exec-rx stdio vs bare stdio`,
          unit: 'MB/s',
          raw: series(runs.raw, 'mbps'),
          rx: series(runs.rx, 'mbps'),
          ctl: series(runs.ctl, 'mbps'),
          note: 'raw: the bare stdio consumer (bench/lib/raw-stdio-client.ts) on its own stdio executor; exec-rx: EnvironmentManager.fromStdio on another',
        }),
        figure({ suite, label: 'client CPU per MB, exec-rx stdio vs bare stdio', unit: 'µs', raw: series(runs.raw, 'cpuUsPerMb'), rx: series(runs.rx, 'cpuUsPerMb'), ctl: series(runs.ctl, 'cpuUsPerMb'), note: cpuNote }),
        figure({
          suite,
          label: `${size} output, exec-rx stdio vs exec-rx ws`,
          unit: 'MB/s',
          raw: series(runs.ws, 'mbps'),
          rx: series(runs.rx, 'mbps'),
          beside: { label: 'bare ws', values: series(runs.rawWs, 'mbps') },
          ratioGoal: { min: 0.9 },
          note: 'raw column: exec-rx over a listening executor (`run --connect`); no control pair of its own: judge it against the bare stdio noise of the first row',
        }),
        figure({
          suite,
          label: 'client CPU per MB, exec-rx stdio vs exec-rx ws',
          unit: 'µs',
          raw: series(runs.ws, 'cpuUsPerMb'),
          rx: series(runs.rx, 'cpuUsPerMb'),
          beside: { label: 'bare ws', values: series(runs.rawWs, 'cpuUsPerMb') },
          note: cpuNote,
        }),
      ];
    } finally {
      rawWs.close();
      await wsManager.close();
      await raw.close();
      await stdio.close();
    }
  });
}
