/**
 * 12. The paths of `exec-rx run` (issue 32), `--only=paths`: `head -c BYTES /dev/zero` run through each
 * path, the output written to stdout, a pipe this process reads and counts (as `| wc -c`). Every path runs
 * the same native codex executor (its own temp CODEX_HOME):
 * - `bare`: the anchor, a bare `ws` consumer in its own process (`../paths-bare.ts`) against a listening
 *   executor: JSON.parse, base64 decode, stdout, the socket paused above 4 MiB pending;
 * - `--connect`: `exec-rx run --connect URL` on the same listening executor, the reference (ratio 1);
 * - direct: `exec-rx run`, its in-process host with an executor it starts;
 * - `--stdio`: `exec-rx run --stdio`, an executor it starts on stdio;
 * - `--host`: `exec-rx run --host URL --environment ID` against the built `exec-rx host` (a child process,
 *   its output log on disk, the default) with a direct executor joined to it (`../lib/cli-host.ts`).
 * Each run gives every path a turn, the order rotating; a second `--connect` and a second bare turn are
 * the control pairs. MB/s from the first output byte to the last (the goals: `--host` ≥ 0.7 × `--connect`,
 * stretch 0.85; `--stdio` ≥ 0.9 ×; `--connect` ≥ 0.9 × bare), from spawn to exit beside it, the time to
 * the first byte, and CPU per MB of output of each process: the cli, the host, the executor and what the
 * executor ran (`../lib/pipe-turn.ts`), and their sum against `--connect`'s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchContext } from '../lib/context';
import { sized } from '../lib/context';
import { CLI, CLI_HOST_ENV, cleanEnv, startCliHost } from '../lib/cli-host';
import { startListening, stopExecutor } from '../lib/executors';
import { pipeTurn } from '../lib/pipe-turn';
import type { PipeTurn } from '../lib/pipe-turn';
import { figure, judge } from '../lib/report';
import type { Check, Row } from '../lib/report';
import { formatNumber, interleave, pairwise, series, summarize } from '../lib/stats';
import type { Metrics, PairedRuns } from '../lib/stats';

const BARE = join(__dirname, '..', 'paths-bare.js');
/** Paired runs in a full run, whatever `--runs` says (`--quick` takes its runs). */
const RUNS = 5;

type Path = 'bare' | 'bareCtl' | 'connect' | 'connectCtl' | 'direct' | 'stdio' | 'host';

/** The paths compared with `--connect`, their labels and goals. */
const AGAINST_CONNECT: readonly { readonly path: Path; readonly label: string; readonly min?: number; readonly stretch?: number }[] = [
  { path: 'direct', label: 'exec-rx run (in-process host)' },
  { path: 'stdio', label: 'exec-rx run --stdio', min: 0.9 },
  { path: 'host', label: 'exec-rx run --host (exec-rx host, disk log)', min: 0.7, stretch: 0.85 },
];

const cell = (values: readonly number[]): string => {
  const s = summarize(values);
  return Number.isNaN(s.median) ? '—' : `${formatNumber(s.median)} [${formatNumber(s.min)}–${formatNumber(s.max)}]`;
};

/** The CPU check row of one path: ms per MB of each process. */
function cpuRow(runs: readonly Metrics[], label: string): Check {
  const of = (key: string): string => cell(series(runs, key));
  return {
    kind: 'check',
    suite: 'paths',
    label: `${label}: CPU per MB of output, ms (first byte after ${cell(series(runs, 'firstByteMs'))} ms; the cli's CPU until then ${cell(series(runs, 'cliStartMs'))} ms)`,
    value: `cli ${of('cliMsPerMB')} · host ${of('hostMsPerMB')} · executor ${of('executorMsPerMB')} · its processes ${of('childrenMsPerMB')}`,
    goal: 'reported',
    met: true,
  };
}

/** The rows: MB/s against `--connect` (and `--connect` against bare), the same from spawn to exit, CPU per MB. */
function rows(runs: PairedRuns<Path>, bytes: number): Row[] {
  const out: Row[] = [];
  const mb = `${bytes / 1e6} MB`;
  out.push(
    figure({ suite: 'paths', label: `${mb}, first byte → last, MB/s: exec-rx run --connect (raw column: the bare ws consumer)`, unit: 'MB/s', raw: series(runs.bare, 'mbps'), rx: series(runs.connect, 'mbps'), ctl: series(runs.bareCtl, 'mbps'), ratioGoal: { min: 0.9 } }),
  );
  for (const p of AGAINST_CONNECT) {
    const input = { suite: 'paths', label: `${mb}, first byte → last, MB/s: ${p.label} (raw column: run --connect)`, unit: 'MB/s', raw: series(runs.connect, 'mbps'), rx: series(runs[p.path], 'mbps'), ctl: series(runs.connectCtl, 'mbps') };
    const stretch = p.stretch;
    const row = figure({ ...input, ...(p.min === undefined ? {} : { ratioGoal: { min: p.min } }) });
    if (stretch === undefined) out.push(row);
    else {
      const ratio = row.ratio.median;
      const band = row.control === undefined ? undefined : ([ratio * row.control.min, ratio * row.control.max] as const);
      out.push({ ...row, note: `stretch goal ≥ ${stretch} × run --connect: ${judge(ratio, band, { min: stretch })}` });
    }
  }
  out.push(figure({ suite: 'paths', label: `${mb}, spawn → exit, MB/s: exec-rx run --connect (raw column: the bare ws consumer)`, unit: 'MB/s', raw: series(runs.bare, 'wallMbps'), rx: series(runs.connect, 'wallMbps'), ctl: series(runs.bareCtl, 'wallMbps') }));
  for (const p of AGAINST_CONNECT) {
    out.push(figure({ suite: 'paths', label: `${mb}, spawn → exit, MB/s: ${p.label} (raw column: run --connect)`, unit: 'MB/s', raw: series(runs.connect, 'wallMbps'), rx: series(runs[p.path], 'wallMbps'), ctl: series(runs.connectCtl, 'wallMbps') }));
  }
  // CPU is steadier than the wall clock on a shared machine: the sum over every process, paired.
  const note = 'the cli\'s CPU from its first output on, the host\'s, the executor\'s and what the executor ran (the rows below split it)';
  out.push(figure({ suite: 'paths', label: 'CPU per MB, all processes: exec-rx run --connect (raw column: the bare ws consumer)', unit: 'ms/MB', raw: series(runs.bare, 'totalMsPerMB'), rx: series(runs.connect, 'totalMsPerMB'), ctl: series(runs.bareCtl, 'totalMsPerMB'), note }));
  for (const p of AGAINST_CONNECT) {
    out.push(figure({ suite: 'paths', label: `CPU per MB, all processes: ${p.label} (raw column: run --connect)`, unit: 'ms/MB', raw: series(runs.connect, 'totalMsPerMB'), rx: series(runs[p.path], 'totalMsPerMB'), ctl: series(runs.connectCtl, 'totalMsPerMB') }));
  }
  out.push(cpuRow(runs.bare, 'bare ws consumer'), cpuRow(runs.connect, 'exec-rx run --connect'));
  for (const p of AGAINST_CONNECT) out.push(cpuRow(runs[p.path], p.label));
  const hostCpu = pairwise(series(runs.host, 'cliMsPerMB'), series(runs.connect, 'cliMsPerMB'), (x, y) => x / y);
  out.push({ kind: 'check', suite: 'paths', label: 'cli CPU per MB: run --host / run --connect (paired ratios)', value: cell(hostCpu), goal: 'reported', met: true });
  return out;
}

/** The whole suite. */
export async function pathsSuite(context: BenchContext): Promise<Row[]> {
  const bytes = sized(context, 200_000_000, 20_000_000);
  const command = ['--', 'head', '-c', String(bytes), '/dev/zero'];
  const work = mkdtempSync(join(tmpdir(), 'exec-rx-bench-paths-'));
  const listening = await startListening();
  try {
    const host = await startCliHost(work);
    try {
      let turns = 0;
      const turn = (spec: Omit<PipeTurn, 'bytes' | 'cpuFile'>) => (): Promise<Metrics> => pipeTurn({ ...spec, bytes, cpuFile: join(work, `cpu-${(turns += 1)}.json`) });
      const env = cleanEnv();
      const bare = turn({ argv: [BARE, listening.url, String(bytes)], env, executorPid: listening.pid });
      const connect = turn({ argv: [CLI, 'run', '--connect', listening.url, ...command], env, executorPid: listening.pid });
      context.log(`  ${bytes / 1e6} MB per turn through each path; the host at ${host.url}`);
      const runs = await interleave<Path>(
        {
          bare,
          bareCtl: bare,
          connect,
          connectCtl: connect,
          direct: turn({ argv: [CLI, 'run', ...command], env }),
          stdio: turn({ argv: [CLI, 'run', '--stdio', ...command], env }),
          host: turn({ argv: [CLI, 'run', '--host', host.url, '--environment', CLI_HOST_ENV, ...command], env: { ...env, EXEC_RX_TOKEN: host.token }, executorPid: host.executorPid, hostPid: host.pid }),
        },
        // 5 runs (and the warm-up) in full: 7 turns of 200 MB each keep the suite within minutes.
        { runs: context.quick ? context.runs : RUNS, warmup: 1, between: context.settle, log: context.log },
      );
      return rows(runs, bytes);
    } finally {
      await host.close();
    }
  } finally {
    await stopExecutor(listening);
    rmSync(work, { recursive: true, force: true });
  }
}
