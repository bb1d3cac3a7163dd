/**
 * Statistics for paired benchmark runs: medians, min to max, percentiles, and the runner that
 * interleaves the variants (each run gives every variant one turn, the order rotating from run to run
 * so neither side always goes first).
 */

/** Median, min and max of a set of runs. */
export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/** The `p`-th percentile (0..100) of ascending `sorted`, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))] ?? Number.NaN;
}

/** Median (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), n: values.length };
}

/** Element-wise `f(a[i], b[i])`: the paired comparison of two variants' runs. */
export function pairwise(a: readonly number[], b: readonly number[], f: (x: number, y: number) => number): number[] {
  return a.map((x, i) => f(x, b[i] ?? Number.NaN));
}

/** What one turn of one variant measures: named numbers (ms, MB/s, ...). */
export type Metrics = Readonly<Record<string, number>>;

/** One variant's turn. */
export type Turn = () => Promise<Metrics>;

/** Every run's metrics, per variant, in run order (`runs[i]` of each variant belong to the same pair). */
export type PairedRuns<V extends string> = Record<V, Metrics[]>;

/**
 * Runs `runs` rounds; in each round every variant takes one turn, in an order rotated by the round
 * number. `warmup` rounds are run first and discarded (JIT, socket buffers, executor caches).
 * `between` runs after every turn (a GC, say), outside the measurement.
 */
export async function interleave<V extends string>(
  turns: Record<V, Turn>,
  options: { readonly runs: number; readonly warmup?: number; readonly between?: () => Promise<void> | void; readonly log?: (line: string) => void },
): Promise<PairedRuns<V>> {
  const names = Object.keys(turns) as V[];
  const results = Object.fromEntries(names.map((name) => [name, [] as Metrics[]])) as Record<V, Metrics[]>;
  const warmup = options.warmup ?? 1;
  for (let round = -warmup; round < options.runs; round += 1) {
    const offset = ((round % names.length) + names.length) % names.length;
    const order = [...names.slice(offset), ...names.slice(0, offset)];
    const parts: string[] = [];
    for (const name of order) {
      await options.between?.();
      const metrics = await turns[name]();
      if (round >= 0) results[name].push(metrics);
      parts.push(`${name} ${Object.entries(metrics).map(([k, v]) => `${k}=${formatNumber(v)}`).join(' ')}`);
    }
    options.log?.(`    ${round < 0 ? 'warmup' : `run ${round + 1}/${options.runs}`}: ${parts.join(' | ')}`);
  }
  return results;
}

/** The series of one metric across a variant's runs. */
export const series = (runs: readonly Metrics[], metric: string): number[] => runs.map((m) => m[metric] ?? Number.NaN);

/** Three significant digits, without exponent noise for everyday magnitudes. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toString();
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}
