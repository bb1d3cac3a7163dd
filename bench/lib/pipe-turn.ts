/**
 * One turn of the paths suite: a Node script (the built cli, or the bare consumer) started with its
 * stdout a pipe this process reads and counts, discarding (as `| wc -c` would), and what the turn cost
 * each process. The script runs with `cpu-at-exit.js` preloaded, which reports its own CPU and that of
 * the children it waited for.
 */
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { trackChild } from './executors';
import { childPids, procCpu } from './proc-cpu';
import type { Metrics } from './stats';

/** What to run and which other processes do its work. */
export interface PipeTurn {
  /** The script and its arguments (run as `node --require cpu-at-exit.js …`). */
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Output bytes it must write to stdout. */
  readonly bytes: number;
  /**
   * The executor's pid when it outlives the turn (a listening executor, a host's): its CPU is read from
   * `/proc` before and after. Without it the script starts and stops its own executor, whose CPU is the
   * script's waited-for children (`cpu-at-exit`), and what that executor's children used is sampled
   * from `/proc` every 10 ms while it runs.
   */
  readonly executorPid?: number;
  /** The host's pid (`exec-rx host`), when one serves the turn. */
  readonly hostPid?: number;
  /** A file name for the preload's report (removed after). */
  readonly cpuFile: string;
}

const PRELOAD = join(__dirname, 'cpu-at-exit.js');

/**
 * Runs the turn. Resolves with, per MB of output (10^6 bytes): `mbps` from the first output byte to
 * the last (the stream), `wallMbps` from spawn to exit (what `| wc -c` waits), `firstByteMs`, the CPU
 * the script had used when its first output arrived (`cliStartMs`: loading, connecting), and the CPU in
 * ms per MB of the script from then on (`cliMsPerMB`), the host (`hostMsPerMB`, NaN without one), the executor
 * (`executorMsPerMB`) and the processes the executor ran (`childrenMsPerMB`: the command, and `exec-rx
 * run`'s stdin feeder), and their sum (`totalMsPerMB`). Rejects when the script exits non-zero, writes another count of bytes or leaves no
 * CPU report.
 */
export async function pipeTurn(turn: PipeTurn): Promise<Metrics> {
  const executor0 = turn.executorPid === undefined ? undefined : procCpu(turn.executorPid);
  const host0 = turn.hostPid === undefined ? undefined : procCpu(turn.hostPid).ownMs;
  const t0 = performance.now();
  const child = trackChild(spawn(process.execPath, ['--require', PRELOAD, ...turn.argv], { env: { ...turn.env, EXEC_RX_BENCH_CPU_FILE: turn.cpuFile }, stdio: ['ignore', 'pipe', 'pipe'] }));
  let received = 0;
  let firstAt = Number.NaN;
  let firstBytes = 0;
  let lastAt = Number.NaN;
  // The script's CPU when its first output arrived: its start (loading, connecting), apart from the stream.
  let startMs = Number.NaN;
  child.stdout?.on('data', (chunk: Buffer) => {
    lastAt = performance.now();
    if (received === 0) {
      firstAt = lastAt;
      firstBytes = chunk.length;
      startMs = procCpu(child.pid ?? 0).ownMs;
    }
    received += chunk.length;
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => void (stderr = (stderr + text).slice(-2000)));
  // The script's own executor: the last reading of what its children (the command) used, before it ends.
  const sampled = new Map<number, number>();
  const sampler =
    turn.executorPid === undefined
      ? setInterval(() => {
          for (const pid of childPids(child.pid ?? 0)) sampled.set(pid, procCpu(pid).childrenMs);
        }, 10)
      : undefined;
  const [code] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('close', (...args) => resolve(args)));
  clearInterval(sampler);
  const endAt = performance.now();
  let report: { ownMs: number; childrenMs: number };
  try {
    report = JSON.parse(readFileSync(turn.cpuFile, 'utf8')) as { ownMs: number; childrenMs: number };
  } catch {
    throw new Error(`no CPU report from ${turn.argv.join(' ')} (exit ${String(code)}): ${stderr}`);
  } finally {
    rmSync(turn.cpuFile, { force: true });
  }
  if (code !== 0 || received !== turn.bytes) throw new Error(`${turn.argv.join(' ')} exited ${String(code)} after ${received} of ${turn.bytes} bytes: ${stderr}`);
  const mb = turn.bytes / 1e6;
  let executorMs: number;
  let childrenMs: number;
  if (executor0 === undefined || turn.executorPid === undefined) {
    childrenMs = [...sampled.values()].reduce((sum, ms) => sum + ms, 0);
    executorMs = report.childrenMs - childrenMs;
  } else {
    const executor = procCpu(turn.executorPid);
    executorMs = executor.ownMs - executor0.ownMs;
    childrenMs = executor.childrenMs - executor0.childrenMs;
  }
  const hostMs = host0 === undefined || turn.hostPid === undefined ? Number.NaN : procCpu(turn.hostPid).ownMs - host0;
  return {
    mbps: (received - firstBytes) / 1e6 / ((lastAt - firstAt) / 1000),
    wallMbps: mb / ((endAt - t0) / 1000),
    firstByteMs: firstAt - t0,
    cliStartMs: startMs,
    cliMsPerMB: (report.ownMs - startMs) / mb,
    hostMsPerMB: hostMs / mb,
    executorMsPerMB: executorMs / mb,
    childrenMsPerMB: childrenMs / mb,
    totalMsPerMB: ((report.ownMs - startMs) + (Number.isNaN(hostMs) ? 0 : hostMs) + executorMs + childrenMs) / mb,
  };
}
