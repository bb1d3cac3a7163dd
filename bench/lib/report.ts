/** Figures (one row of the result table each), how they are built from paired runs, and the outputs. */
import { cpus, availableParallelism, totalmem } from 'node:os';
import { formatNumber, pairwise, summarize } from './stats';
import type { Summary } from './stats';

/** A goal on the paired comparison (or on the exec-rx figure itself). */
export interface Goal {
  readonly text: string;
  readonly met: boolean;
}

/** One row: raw and exec-rx over the same paired runs, and their paired comparison. */
export interface Figure {
  readonly suite: string;
  readonly label: string;
  readonly unit: string;
  readonly raw: Summary;
  readonly rx: Summary;
  /** A third measurement printed beside raw (e.g. raw without ack-pong). */
  readonly beside?: { readonly label: string; readonly summary: Summary };
  /** Median (min to max) of the paired ratios exec-rx / raw. */
  readonly ratio: Summary;
  /** Median (min to max) of the paired differences exec-rx − raw, when the goal is about a difference. */
  readonly diff?: Summary;
  readonly goal?: Goal;
  readonly note?: string;
  /** The raw series, run by run (pairs share an index). */
  readonly series: { readonly raw: readonly number[]; readonly rx: readonly number[]; readonly beside?: readonly number[] };
}

export interface FigureInput {
  readonly suite: string;
  readonly label: string;
  readonly unit: string;
  readonly raw: readonly number[];
  readonly rx: readonly number[];
  readonly beside?: { readonly label: string; readonly values: readonly number[] };
  /** Ratio goal: `min` (exec-rx at least this fraction of raw) or `max` (at most this multiple). */
  readonly ratioGoal?: { readonly min?: number; readonly max?: number };
  /** Difference goal: exec-rx at most raw plus `max` (same unit). */
  readonly diffGoal?: { readonly max: number };
  /** Goal on exec-rx's own median: at most `max` (same unit). */
  readonly absoluteGoal?: { readonly max: number };
  readonly note?: string;
}

export function figure(input: FigureInput): Figure {
  const ratio = summarize(pairwise(input.rx, input.raw, (x, y) => x / y));
  const rx = summarize(input.rx);
  const base = {
    suite: input.suite,
    label: input.label,
    unit: input.unit,
    raw: summarize(input.raw),
    rx,
    ratio,
    series: { raw: input.raw, rx: input.rx, ...(input.beside === undefined ? {} : { beside: input.beside.values }) },
    ...(input.beside === undefined ? {} : { beside: { label: input.beside.label, summary: summarize(input.beside.values) } }),
    ...(input.note === undefined ? {} : { note: input.note }),
  };
  if (input.diffGoal !== undefined) {
    const diff = summarize(pairwise(input.rx, input.raw, (x, y) => x - y));
    const max = input.diffGoal.max;
    return { ...base, diff, goal: { text: `≤ raw + ${formatNumber(max)} ${input.unit}`, met: diff.median <= max } };
  }
  if (input.ratioGoal?.min !== undefined) {
    return { ...base, goal: { text: `≥ ${input.ratioGoal.min} × raw`, met: ratio.median >= input.ratioGoal.min } };
  }
  if (input.ratioGoal?.max !== undefined) {
    return { ...base, goal: { text: `≤ ${input.ratioGoal.max} × raw`, met: ratio.median <= input.ratioGoal.max } };
  }
  if (input.absoluteGoal !== undefined) {
    return { ...base, goal: { text: `≤ ${formatNumber(input.absoluteGoal.max)} ${input.unit}`, met: rx.median <= input.absoluteGoal.max } };
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

export function markdown(figures: readonly Figure[], context: ReportContext): string {
  const m = context.machine;
  const lines = [
    `# exec-rx benchmark${context.quick ? ' (--quick smoke run: not representative)' : ''}`,
    '',
    `Machine: ${m.nproc} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}; executor ${context.executor}.`,
    `Each figure: median [min–max] of ${context.runs} paired runs (raw and exec-rx in turn, order alternating); ratio = median [min–max] of the paired ratios exec-rx / raw. Whole run ${Math.round(context.seconds)} s.`,
    `1-min load average before→after each suite (other work on the machine shows here): ${context.loads.map((l) => `${l.suite} ${l.before.toFixed(1)}→${l.after.toFixed(1)} (${Math.round(l.seconds)} s)`).join(', ')}.`,
    '',
    '| figure | raw | exec-rx | ratio | goal | met? |',
    '|---|---|---|---|---|---|',
  ];
  for (const f of figures) {
    const raw = f.beside === undefined ? cell(f.raw, f.unit) : `${cell(f.raw, f.unit)}; ${f.beside.label}: ${cell(f.beside.summary, f.unit)}`;
    const ratio = `${formatNumber(f.ratio.median)} [${formatNumber(f.ratio.min)}–${formatNumber(f.ratio.max)}]${f.diff === undefined ? '' : `; Δ ${signed(f.diff.median)} ${f.unit} [${signed(f.diff.min)}…${signed(f.diff.max)}]`}`;
    const met = f.goal === undefined ? '—' : f.goal.met ? 'yes' : '**NO**';
    const n = f.ratio.n === context.runs ? '' : ` (${f.ratio.n} pairs)`;
    lines.push(`| ${f.suite}: ${f.label}${n} | ${raw} | ${cell(f.rx, f.unit)} | ${ratio} | ${f.goal?.text ?? '—'} | ${met} |`);
  }
  const notes = figures.filter((f) => f.note !== undefined);
  if (notes.length > 0) {
    lines.push('', 'Notes:');
    for (const f of notes) lines.push(`- ${f.suite}: ${f.label}: ${f.note ?? ''}`);
  }
  return `${lines.join('\n')}\n`;
}

const signed = (value: number): string => `${value >= 0 ? '+' : ''}${formatNumber(value)}`;
