/** The soak's figures and their goals, from its memory samples and bookkeeping. */
import type { Check } from './report';

/** One memory sample; `gced` when taken right after a forced GC. */
export interface SoakSample {
  readonly ms: number;
  readonly heapUsed: number;
  readonly rss: number;
  readonly gced: boolean;
}

interface Bookkeeping {
  readonly resources: number;
  readonly rpc: { readonly pending: number; readonly routes: number; readonly processes: number };
}

export interface SoakOutcome {
  readonly samples: readonly SoakSample[];
  readonly baselineAtMs: number;
  readonly processes: number;
  /** Starts refused because the socket dropped before their reply (then started again as new processes). */
  readonly notStarted: number;
  readonly mismatches: readonly string[];
  readonly drops: number;
  readonly failedRecoveries: number;
  readonly baseline: Bookkeeping;
  readonly end: Bookkeeping;
  readonly seconds: number;
}

const MIB = 2 ** 20;
const KIB = 2 ** 10;

/** Least-squares slope of `y` over `x`. */
export function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? Number.NaN : sxy / sxx;
}

export function soakChecks(o: SoakOutcome): Check[] {
  const gced = o.samples.filter((s) => s.gced);
  const start = gced.find((s) => s.ms >= o.baselineAtMs) ?? gced[0];
  const end = gced.at(-1);
  if (start === undefined || end === undefined) throw new Error('soak took no samples');
  const after = gced.filter((s) => s.ms >= start.ms && s !== end);
  const perMinute = slope(after.map((s) => [s.ms / 60_000, s.heapUsed / KIB] as const));
  const heapDelta = end.heapUsed - start.heapUsed;
  const rssChange = end.rss / start.rss - 1;
  const suite = 'soak';
  const at = `after ${Math.round(start.ms / 1000)} s`;
  return [
    { kind: 'check', suite, label: `${o.processes} processes, ${o.drops} socket drops in ${o.seconds} s: output sha256-exact`, value: `${o.processes - o.mismatches.length} of ${o.processes} exact`, goal: 'every one', met: o.mismatches.length === 0 && o.processes > 0, note: `${o.notStarted} start(s) failed with the socket dropping before their reply (never sent twice; started again as new processes)${o.mismatches.length === 0 ? '' : `; ${o.mismatches.slice(0, 5).join('; ')}`}` },
    { kind: 'check', suite, label: 'socket drops recovered', value: `${o.drops} of ${o.drops + o.failedRecoveries}`, goal: 'every one', met: o.failedRecoveries === 0 && o.drops > 0 },
    { kind: 'check', suite, label: `heap after a forced GC: end − ${at}`, value: `${(heapDelta / MIB).toFixed(2)} MiB (${(start.heapUsed / MIB).toFixed(1)} → ${(end.heapUsed / MIB).toFixed(1)} MiB)`, goal: '≤ 2 MiB', met: heapDelta <= 2 * MIB },
    { kind: 'check', suite, label: `heap growth from ${at}, linear fit of ${after.length} forced-GC samples`, value: `${perMinute.toFixed(1)} KiB/min`, goal: '< 100 KiB/min', met: perMinute < 100 },
    { kind: 'check', suite, label: `RSS: end / ${at}`, value: `${rssChange >= 0 ? '+' : ''}${(rssChange * 100).toFixed(1)} % (${(start.rss / MIB).toFixed(1)} → ${(end.rss / MIB).toFixed(1)} MiB)`, goal: '≤ +10 %', met: rssChange <= 0.1 },
    { kind: 'check', suite, label: 'active handles and requests: end vs baseline', value: `${o.end.resources} (baseline ${o.baseline.resources})`, goal: '≤ baseline', met: o.end.resources <= o.baseline.resources },
    {
      kind: 'check',
      suite,
      label: 'pending calls, process routes, live processes at the end',
      value: `${o.end.rpc.pending}, ${o.end.rpc.routes}, ${o.end.rpc.processes} (baseline ${o.baseline.rpc.pending}, ${o.baseline.rpc.routes}, ${o.baseline.rpc.processes})`,
      goal: 'back to baseline',
      met: o.end.rpc.pending === o.baseline.rpc.pending && o.end.rpc.routes === o.baseline.rpc.routes && o.end.rpc.processes === o.baseline.rpc.processes,
    },
  ];
}
