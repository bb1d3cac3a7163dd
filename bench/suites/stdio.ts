/**
 * 12. The stdio transport (issue 32), `--only=stdio`: `head -c 200000000 /dev/zero` through
 * `codex exec-server --listen stdio`, MB/s of decoded output from just before `process/start` to
 * `closed`. Five turns per run, order rotating: exec-rx over stdio (`EnvironmentManager.fromStdio`, what
 * `exec-rx run --stdio` uses), the bare stdio consumer (`../lib/raw-stdio-client`), exec-rx over a
 * listening executor's WebSocket (what `run --connect` uses), the bare ws client on that executor, and a
 * second bare stdio turn (the control pair). Each side has its own executor, started once. Figures:
 * exec-rx stdio / bare stdio (what exec-rx adds on stdio), exec-rx stdio / exec-rx ws (goal ≥ 0.9×,
 * issue 32), the bench process's CPU per MB for each, and the executor's own CPU per MB under the bare
 * stdio consumer against under the bare ws client (what its stdio writer costs).
 */
import { EnvironmentManager } from '../../src';
import { spawnExecutor } from '../../src/executor/spawn-executor';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { startListening, stopExecutor, trackCloser } from '../lib/executors';
import { cpuMsOfTree } from '../lib/host-harness';
import { RawClient } from '../lib/raw-client';
import { RawStdioClient } from '../lib/raw-stdio-client';
import { figure } from '../lib/report';
import type { Row } from '../lib/report';
import { expectEqual, rawRun, rxConnect, rxEnvironment, rxRun } from '../lib/runs';
import type { ProcessRun } from '../lib/runs';
import { interleave, series } from '../lib/stats';

/** exec-rx on a stdio executor of its own, as `exec-rx run --stdio` builds it; `close()` stops both. */
async function rxStdio(): Promise<{ readonly manager: EnvironmentManager; readonly pid: number; close(): Promise<void> }> {
  const executor = await spawnExecutor({ mode: 'stdio' });
  trackCloser({ close: () => executor.stop() });
  try {
    const manager = await EnvironmentManager.fromStdio('bench', executor.child, { clientName: 'bench-rx', keepalive: false });
    return {
      manager,
      pid: executor.pid,
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
  const listening = await startListening();
  try {
    const rawWs = await RawClient.dial(listening.url, { ackPong: true });
    const wsManager = await rxConnect(listening.url);
    const raw = await RawStdioClient.spawn();
    const stdio = await rxStdio();
    try {
      const wsEnvironment = rxEnvironment(wsManager);
      const stdioEnvironment = rxEnvironment(stdio.manager);
      const mb = bytes / 1e6;
      const measure = async (executorPid: number, run: () => Promise<ProcessRun>): Promise<{ mbps: number; cpuUsPerMb: number; executorUsPerMb: number }> => {
        const cpu0 = process.cpuUsage();
        const executor0 = cpuMsOfTree(executorPid);
        const result = await run();
        const cpu = process.cpuUsage(cpu0);
        const executorMs = cpuMsOfTree(executorPid) - executor0;
        expectEqual('output bytes', result.bytes, bytes);
        return { mbps: mb / (result.ms / 1000), cpuUsPerMb: (cpu.user + cpu.system) / mb, executorUsPerMb: (executorMs * 1000) / mb };
      };
      const runs = await interleave(
        {
          raw: () => measure(raw.pid, () => rawRun(raw, argv)),
          rx: () => measure(stdio.pid, () => rxRun(stdioEnvironment, argv)),
          ws: () => measure(listening.pid, () => rxRun(wsEnvironment, argv)),
          rawWs: () => measure(listening.pid, () => rawRun(rawWs, argv)),
          ctl: () => measure(raw.pid, () => rawRun(raw, argv)),
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
        figure({
          suite,
          label: 'executor CPU per MB, stdio vs ws (bare consumers)',
          unit: 'µs',
          raw: series(runs.rawWs, 'executorUsPerMb'),
          rx: series(runs.raw, 'executorUsPerMb'),
          beside: { label: 'with exec-rx: ws', values: series(runs.ws, 'executorUsPerMb') },
          note: 'user + system CPU time of the executor and its processes (/proc, 10 ms ticks) per MB of output; raw column: the listening executor under the bare ws client, exec-rx column: the stdio executor under the bare stdio consumer',
        }),
      ];
    } finally {
      rawWs.close();
      await wsManager.close();
      await raw.close();
      await stdio.close();
    }
  } finally {
    await stopExecutor(listening);
  }
}
