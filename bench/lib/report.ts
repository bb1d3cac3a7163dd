/**
 * Figures (one row of the result table each), how they are built from paired runs, how a goal is judged
 * against the noise the control pair shows, and the markdown table.
 */
import { cpus, availableParallelism, totalmem } from 'node:os';
import { formatNumber, pairwise, summarize } from './stats';
import type { Summary } from './stats';

/**
 * How a goal came out, judged against the noise floor (see {@link judge}): `met` even at the edge of
 * the noise, `within noise` when the goal lies inside the noise band around the figure, `missed` when
 * the whole band misses it.
 */
export type Verdict = 'met' | 'within noise' | 'missed';

/** A goal on the paired comparison. */
export interface Goal {
  readonly text: string;
  readonly verdict: Verdict;
}

/** One row: raw and exec-rx over the same paired runs, and their paired comparison. */
export interface Figure {
  readonly kind: 'figure';
  readonly suite: string;
  readonly label: string;
  readonly unit: string;
  readonly raw: Summary;
  readonly rx: Summary;
  /** A third measurement printed beside raw (e.g. raw without ack-pong). */
  readonly beside?: { readonly label: string; readonly summary: Summary };
  /** The bare cost of the same work in the same process (the limit of any JavaScript client). */
  readonly floor?: Summary;
  /** Median (min to max) of the paired ratios exec-rx / raw. */
  readonly ratio: Summary;
  /** Median (min to max) of the paired ratios of the control pair: raw / raw, one more raw turn per run. */
  readonly control?: Summary;
  /** Median (min to max) of the paired differences exec-rx − raw, when the goal is about a difference. */
  readonly diff?: Summary;
  /** The control pair's differences raw − raw, for a difference goal. */
  readonly controlDiff?: Summary;
  readonly goal?: Goal;
  readonly note?: string;
  /** The series, run by run (pairs share an index). */
  readonly series: { readonly raw: readonly number[]; readonly rx: readonly number[]; readonly ctl?: readonly number[]; readonly beside?: readonly number[]; readonly floor?: readonly number[] };
}

/** A figure of exec-rx alone with its goal (the soak): no raw side. */
export interface Check {
  readonly kind: 'check';
  readonly suite: string;
  readonly label: string;
  readonly value: string;
  readonly goal: string;
  readonly met: boolean;
  readonly note?: string;
}

/** What a suite reports. */
export type Row = Figure | Check;

export interface FigureInput {
  readonly suite: string;
  readonly label: string;
  readonly unit: string;
  readonly raw: readonly number[];
  readonly rx: readonly number[];
  /** The control pair: a second raw turn in each run (its ratio to raw is the noise floor). */
  readonly ctl?: readonly number[];
  readonly beside?: { readonly label: string; readonly values: readonly number[] };
  readonly floor?: readonly number[];
  /** Ratio goal: `min` (exec-rx at least this fraction of raw) or `max` (at most this multiple). */
  readonly ratioGoal?: { readonly min?: number; readonly max?: number };
  /** Difference goal: exec-rx at most raw plus `max` (same unit). */
  readonly diffGoal?: { readonly max: number };
  readonly note?: string;
}

/**
 * Judges a figure against its goal, inside the noise band the control pair shows. For a ratio goal the
 * band is the median ratio times the control's paired ratios (min to max): `[r·min(c), r·max(c)]`; for
 * a difference goal it is the median difference plus the control's paired differences. `met` when the
 * whole band satisfies the goal, `missed` when none of it does, `within noise` otherwise. Without a
 * control the median alone decides (`met` or `missed`).
 */
export function judge(value: number, band: readonly [number, number] | undefined, goal: { readonly min?: number; readonly max?: number }): Verdict {
  const [low, high] = band ?? [value, value];
  if (goal.min !== undefined) return low >= goal.min ? 'met' : high < goal.min ? 'missed' : 'within noise';
  if (goal.max !== undefined) return high <= goal.max ? 'met' : low > goal.max ? 'missed' : 'within noise';
  return 'met';
}

export function figure(input: FigureInput): Figure {
  const ratio = summarize(pairwise(input.rx, input.raw, (x, y) => x / y));
  const control = input.ctl === undefined ? undefined : summarize(pairwise(input.ctl, input.raw, (x, y) => x / y));
  const base = {
    kind: 'figure' as const,
    suite: input.suite,
    label: input.label,
    unit: input.unit,
    raw: summarize(input.raw),
    rx: summarize(input.rx),
    ratio,
    series: {
      raw: input.raw,
      rx: input.rx,
      ...(input.ctl === undefined ? {} : { ctl: input.ctl }),
      ...(input.beside === undefined ? {} : { beside: input.beside.values }),
      ...(input.floor === undefined ? {} : { floor: input.floor }),
    },
    ...(control === undefined ? {} : { control }),
    ...(input.beside === undefined ? {} : { beside: { label: input.beside.label, summary: summarize(input.beside.values) } }),
    ...(input.floor === undefined ? {} : { floor: summarize(input.floor) }),
    ...(input.note === undefined ? {} : { note: input.note }),
  };
  if (input.diffGoal !== undefined) {
    const diff = summarize(pairwise(input.rx, input.raw, (x, y) => x - y));
    const controlDiff = input.ctl === undefined ? undefined : summarize(pairwise(input.ctl, input.raw, (x, y) => x - y));
    const band = controlDiff === undefined ? undefined : ([diff.median + controlDiff.min, diff.median + controlDiff.max] as const);
    const verdict = judge(diff.median, band, { max: input.diffGoal.max });
    return { ...base, diff, ...(controlDiff === undefined ? {} : { controlDiff }), goal: { text: `≤ raw + ${formatNumber(input.diffGoal.max)} ${input.unit}`, verdict } };
  }
  if (input.ratioGoal !== undefined) {
    const band = control === undefined ? undefined : ([ratio.median * control.min, ratio.median * control.max] as const);
    const text = input.ratioGoal.min !== undefined ? `≥ ${input.ratioGoal.min} × raw` : `≤ ${String(input.ratioGoal.max)} × raw`;
    return { ...base, goal: { text, verdict: judge(ratio.median, band, input.ratioGoal) } };
  }
  return base;
}

/** The machine the figures come from. */
export interface Machine {
  readonly nproc: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly platform: string;
  readonly memoryGiB: number;
}

export function machine(): Machine {
  return {
    nproc: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
}

const cell = (s: Summary, unit: string): string => `${formatNumber(s.median)} ${unit} [${formatNumber(s.min)}–${formatNumber(s.max)}]`;
const range = (s: Summary): string => `${formatNumber(s.median)} [${formatNumber(s.min)}–${formatNumber(s.max)}]`;
const signed = (value: number): string => `${value >= 0 ? '+' : ''}${formatNumber(value)}`;
const VERDICT: Readonly<Record<Verdict, string>> = { met: 'yes', 'within noise': '*within noise*', missed: '**NO**' };

/** The 1-minute load average before and after a suite, and how long it took. */
export interface SuiteLoad {
  readonly suite: string;
  readonly before: number;
  readonly after: number;
  readonly seconds: number;
}

export interface ReportContext {
  readonly machine: Machine;
  readonly runs: number;
  readonly quick: boolean;
  readonly seconds: number;
  readonly executor: string;
  readonly loads: readonly SuiteLoad[];
}

function figureLine(f: Figure, runs: number): string {
  const raw = f.beside === undefined ? cell(f.raw, f.unit) : `${cell(f.raw, f.unit)}; ${f.beside.label}: ${cell(f.beside.summary, f.unit)}`;
  const ratio = `${range(f.ratio)}${f.diff === undefined ? '' : `; Δ ${signed(f.diff.median)} ${f.unit} [${signed(f.diff.min)}…${signed(f.diff.max)}]`}`;
  const noise = f.control === undefined ? '—' : `${range(f.control)}${f.controlDiff === undefined ? '' : `; Δ [${signed(f.controlDiff.min)}…${signed(f.controlDiff.max)}]`}`;
  const n = f.ratio.n === runs ? '' : ` (${f.ratio.n} pairs)`;
  const met = f.goal === undefined ? '—' : VERDICT[f.goal.verdict];
  return `| ${f.suite}: ${f.label}${n} | ${raw} | ${cell(f.rx, f.unit)} | ${f.floor === undefined ? '—' : cell(f.floor, f.unit)} | ${ratio} | ${noise} | ${f.goal?.text ?? '—'} | ${met} |`;
}

export function markdown(rows: readonly Row[], context: ReportContext): string {
  const m = context.machine;
  const figures = rows.filter((r): r is Figure => r.kind === 'figure');
  const checks = rows.filter((r): r is Check => r.kind === 'check');
  const lines = [
    `# exec-rx benchmark${context.quick ? ' (--quick smoke run: not representative)' : ''}`,
    '',
    `Machine: ${m.nproc} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}; executor ${context.executor}.`,
    `Each figure: median [min–max] of ${context.runs} paired runs (raw, exec-rx and a second raw turn in each run, order rotating); ratio = median [min–max] of the paired ratios exec-rx / raw; noise = the same for the control pair raw / raw. A goal is met when it holds across the noise band (ratio × noise min…max), *within noise* when the goal lies inside that band. Floor: JSON.parse + base64 decode of the same frames in the same process. Whole run ${Math.round(context.seconds)} s.`,
    `1-min load average before→after each suite (other work on the machine shows here): ${context.loads.map((l) => `${l.suite} ${l.before.toFixed(1)}→${l.after.toFixed(1)} (${Math.round(l.seconds)} s)`).join(', ')}.`,
  ];
  if (figures.length > 0) {
    lines.push('', '| figure | raw | exec-rx | floor | ratio | noise (raw / raw) | goal | met? |', '|---|---|---|---|---|---|---|---|');
    for (const f of figures) lines.push(figureLine(f, context.runs));
  }
  if (checks.length > 0) {
    lines.push('', '| check | exec-rx | goal | met? |', '|---|---|---|---|');
    for (const c of checks) lines.push(`| ${c.suite}: ${c.label} | ${c.value} | ${c.goal} | ${c.met ? 'yes' : '**NO**'} |`);
  }
  const notes = rows.filter((r) => r.note !== undefined);
  if (notes.length > 0) {
    lines.push('', 'Notes:');
    for (const r of notes) lines.push(`- ${r.suite}: ${r.label}: ${r.note ?? ''}`);
  }
  return `${lines.join('\n')}\n`;
}
