/**
 * The nemesis run's report: schedules run, faults injected by kind, violations by invariant, and each
 * failing seed with its schedule and its violations (with the replicas' log lines about each), as
 * markdown and json in `bench/results/` (`nemesis-<time>.{md,json}` and `latest-nemesis.{md,json}`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Invariant } from './invariants';
import { INVARIANTS } from './invariants';
import type { SeedResult } from './run-seed';
import type { FaultKind } from './schedule';
import { FAULT_KINDS } from './schedule';

/** A whole run. */
export interface RunReport {
  readonly startedAt: string;
  readonly ms: number;
  readonly machine: string;
  readonly options: Readonly<Record<string, string | number>>;
  readonly schedules: number;
  readonly injected: Record<FaultKind, number>;
  readonly violations: Record<Invariant, number>;
  /** Seeds with a violation or an error. */
  readonly failing: readonly number[];
  readonly seeds: readonly SeedResult[];
}

/** The report of `seeds` (see the module's doc). */
export function buildReport(seeds: readonly SeedResult[], startedAt: Date, options: Readonly<Record<string, string | number>>): RunReport {
  const injected = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>;
  const violations = Object.fromEntries(INVARIANTS.map((name) => [name, 0])) as Record<Invariant, number>;
  for (const seed of seeds) {
    for (const kind of FAULT_KINDS) injected[kind] += seed.injected[kind];
    for (const violation of seed.violations) violations[violation.invariant] += 1;
  }
  const cpu = cpus();
  return {
    startedAt: startedAt.toISOString(),
    ms: Date.now() - startedAt.getTime(),
    machine: `${cpu.length} CPUs (${cpu[0]?.model ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load ${loadavg().map((n) => n.toFixed(1)).join(' ')}`,
    options,
    schedules: seeds.length,
    injected,
    violations,
    failing: seeds.filter((seed) => seed.violations.length > 0 || seed.error !== undefined).map((seed) => seed.seed),
    seeds,
  };
}

const table = (head: readonly string[], rows: readonly (readonly (string | number)[])[]): string[] => [
  `| ${head.join(' | ')} |`,
  `|${head.map(() => '---').join('|')}|`,
  ...rows.map((row) => `| ${row.map((cell) => String(cell).replace(/\|/g, '\\|')).join(' | ')} |`),
];

/** The report as markdown. */
export function markdown(report: RunReport): string {
  const out = [
    `# Nemesis run ${report.startedAt}`,
    '',
    `${report.machine}. ${report.schedules} schedule(s) in ${Math.round(report.ms / 1000)} s; options ${JSON.stringify(report.options)}.`,
    `Failing seeds: ${report.failing.length === 0 ? 'none' : report.failing.join(', ')}.`,
    '',
    '## Faults injected, by kind',
    '',
    ...table(['kind', 'injected'], FAULT_KINDS.map((kind) => [kind, report.injected[kind]])),
    '',
    '## Violations, by invariant',
    '',
    ...table(['invariant', 'violations'], INVARIANTS.map((name) => [name, report.violations[name]])),
    '',
    '## Seeds',
    '',
    ...table(
      ['seed', 'faults', 'processes', 'keyed starts', 'stdin writes', 'readers', 'violations', 's'],
      report.seeds.map((seed) => {
        const violations = seed.error === undefined ? seed.violations.length : 'error';
        return [seed.seed, seed.faults.length, seed.processes, seed.keyedStarts, seed.stdinWrites, seed.readers, violations, Math.round(seed.ms / 1000)];
      }),
    ),
  ];
  for (const seed of report.seeds.filter((one) => one.violations.length > 0 || one.error !== undefined)) out.push('', ...failing(seed));
  // The run's notes, alike ones (numbers aside) said once with how many seeds said them.
  const notes = new Map<string, { note: string; seeds: number }>();
  for (const seed of report.seeds) {
    for (const note of new Set(seed.notes.filter((one) => /not available|absent|failed|^lab:/.test(one)))) {
      const key = note.replace(/\d+/g, 'N');
      notes.set(key, { note, seeds: (notes.get(key)?.seeds ?? 0) + 1 });
    }
  }
  if (notes.size > 0) out.push('', '## Notes', '', ...[...notes.values()].map(({ note, seeds }) => `- ${note}${seeds > 1 ? ` (and alike in ${seeds - 1} more seed(s))` : ''}`));
  return `${out.join('\n')}\n`;
}

/** One failing seed: its schedule as applied, its error, its violations with their log lines. */
function failing(seed: SeedResult): string[] {
  const out = [`## Seed ${seed.seed}`, '', `Replay: \`npm run nemesis -- --seed ${seed.seed}\``, ''];
  const rows = seed.faults.map((f) => [f.index, f.kind, `${(f.atMs / 1000).toFixed(1)} s`, `${f.durationMs} ms`, f.target, `${f.tookMs} ms`, f.note]);
  out.push(...table(['#', 'kind', 'at', 'duration', 'target', 'took', 'note'], rows));
  if (seed.error !== undefined) out.push('', '```text', seed.error.slice(0, 2_000), '```');
  for (const violation of seed.violations) {
    out.push('', `- **${violation.invariant}**: ${violation.detail}`);
    if (violation.lines.length > 0) out.push('', '  ```text', ...violation.lines.slice(-15).map((line) => `  ${line.slice(0, 240)}`), '  ```');
  }
  const justified = seed.notes.filter((note) => /justified|gone with/.test(note));
  if (justified.length > 0) out.push('', 'Justified losses:', '', ...justified.slice(0, 20).map((note) => `- ${note}`));
  return out;
}

/** Writes the report (markdown and json) to `dir` under its time and as `latest-nemesis`; the markdown file's path. */
export function writeReport(report: RunReport, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, '-');
  const text = markdown(report);
  const json = `${JSON.stringify(report, null, 1)}\n`;
  for (const name of [`nemesis-${stamp}`, 'latest-nemesis']) {
    writeFileSync(join(dir, `${name}.md`), text);
    writeFileSync(join(dir, `${name}.json`), json);
  }
  return join(dir, `nemesis-${stamp}.md`);
}
