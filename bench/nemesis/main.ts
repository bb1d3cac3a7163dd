/**
 * `npm run nemesis -- --seeds N --minutes M` (issue 38): runs seeded fault schedules against a live
 * cluster (`./lab`: redis-server, three replicas of the built `exec-rx host`, HAProxy with the README's
 * configuration, real executors) until N seeds or M minutes, checks the invariants after each
 * (`./invariants`), prints each failing seed with its violations, and writes the report to
 * `bench/results/` (markdown and json). Exits 1 on any violation (or a seed that could not run).
 *
 *   node dist/bench/nemesis/main.js [--seeds N | --seeds 7,19 | --seed S] [--first-seed S] [--minutes M]
 *                                   [--faults F] [--environments E] [--via cluster|balancer]
 *
 * `--seeds N` runs seeds S..S+N-1 (S from `--first-seed`, default 1); a list runs those; `--seed S` runs
 * seed S alone (what replays a failing one). A failing seed's replica logs (whole) and history go to
 * `bench/results/nemesis-logs/seed-<n>/` (not committed).
 */
import { join } from 'node:path';
import { buildReport, writeReport } from './report';
import type { SeedResult } from './run-seed';
import { runSeed, stopRunning } from './run-seed';

interface Args {
  readonly seeds: readonly number[] | undefined;
  readonly count: number;
  readonly first: number;
  readonly minutes: number;
  readonly faults: number;
  readonly environments: number;
  readonly via: 'cluster' | 'balancer';
}

function parse(argv: readonly string[]): Args {
  const value = (name: string): string | undefined => {
    const at = argv.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
    if (at < 0) return undefined;
    const arg = argv[at] ?? '';
    return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[at + 1];
  };
  const number = (name: string, fallback: number): number => {
    const text = value(name);
    const parsed = text === undefined ? fallback : Number(text);
    if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`--${name} must be a number, not ${String(text)}`);
    return parsed;
  };
  const one = value('seed');
  const seeds = one ?? value('seeds') ?? '10';
  const list = one !== undefined || seeds.includes(',') ? seeds.split(',').filter((seed) => seed.trim() !== '').map((seed) => Number(seed.trim())) : undefined;
  if (list?.some((seed) => !Number.isInteger(seed))) throw new Error(`--seeds must be a count or a list of integers, not ${seeds}`);
  const via = value('via') ?? 'cluster';
  if (via !== 'cluster' && via !== 'balancer') throw new Error('--via must be cluster or balancer');
  return {
    seeds: list,
    count: list === undefined ? number('seeds', 10) : list.length,
    first: number('first-seed', 1),
    minutes: number('minutes', 15),
    faults: number('faults', 5),
    environments: number('environments', 3),
    via,
  };
}

async function main(): Promise<number> {
  const args = parse(process.argv.slice(2));
  const started = new Date();
  const deadline = started.getTime() + args.minutes * 60_000;
  const seeds = args.seeds ?? Array.from({ length: args.count }, (_v, i) => args.first + i);
  const results: SeedResult[] = [];
  const resultsDir = join(__dirname, '..', '..', '..', 'bench', 'results');
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  let slowest = 0;
  for (const seed of seeds) {
    // Not one that would not end in time (a seed takes about as long as the slowest so far).
    if (results.length > 0 && Date.now() + slowest > deadline) {
      say(`stopping before seed ${seed}: ${args.minutes} minute(s) would pass`);
      break;
    }
    const result = await runSeed({ seed, faults: args.faults, environments: args.environments, via: args.via, logDir: join(resultsDir, 'nemesis-logs'), say });
    results.push(result);
    slowest = Math.max(slowest, result.ms);
    const verdict = result.error !== undefined ? 'ERROR' : result.violations.length === 0 ? 'ok' : `${result.violations.length} violation(s)`;
    say(`seed ${seed}: ${verdict} in ${Math.round(result.ms / 1000)} s (${result.faults.map((f) => f.kind).join(', ')})`);
    if (result.error !== undefined) say(`  error: ${result.error.split('\n').slice(0, 3).join(' | ')}`);
    for (const violation of result.violations) say(`  ${violation.invariant}: ${violation.detail.slice(0, 400)}`);
  }
  const options = { seeds: seeds.join(','), minutes: args.minutes, faults: args.faults, environments: args.environments, via: args.via };
  const report = buildReport(results, started, options);
  const written = writeReport(report, resultsDir);
  say(`\n${report.schedules} schedule(s); faults injected: ${Object.entries(report.injected).map(([kind, n]) => `${kind} ${n}`).join(', ')}`);
  say(`violations: ${Object.entries(report.violations).map(([name, n]) => `${name} ${n}`).join(', ')}`);
  say(`failing seeds: ${report.failing.length === 0 ? 'none' : report.failing.join(', ')}; report: ${written}`);
  return report.failing.length === 0 ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stdout.write(`\n${signal}: stopping the lab\n`);
    void stopRunning().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`nemesis: ${error instanceof Error ? error.message : String(error)}\n`);
    void stopRunning().finally(() => process.exit(2));
  },
);
