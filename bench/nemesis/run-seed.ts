/**
 * One seed, end to end: its schedule, a fresh lab, the workload through the schedule, the heal, the
 * workload's end (every process ended, read again from the start), the take-back metrics, what Redis
 * holds, the invariants; then the lab stopped whatever happened. A failing seed's replica logs are
 * written whole to `logDir` (when given) and each violation gets the log lines about it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Lab } from './lab';
import type { Verdict, Violation } from './invariants';
import { checkInvariants } from './invariants';
import type { AppliedFault } from './nemesis';
import { Nemesis } from './nemesis';
import { Prng } from './prng';
import { auditRedis } from './redis-audit';
import type { ReplicaLine } from './replica-proc';
import type { FaultKind, Schedule } from './schedule';
import { buildSchedule, countKinds } from './schedule';
import { Workload } from './workload';

/** How a seed runs. */
export interface SeedOptions {
  readonly seed: number;
  /** Faults in its schedule. @default 5 */
  readonly faults?: number;
  /** Environments (executors). @default 3 */
  readonly environments?: number;
  /** How the workload reaches the cluster (see `WorkloadOptions.via`). @default 'cluster' */
  readonly via?: 'cluster' | 'balancer';
  /** Where a failing seed's replica logs go, if anywhere. */
  readonly logDir?: string;
  /** Progress lines (never secrets). */
  readonly say?: (line: string) => void;
}

/** A fault as the report shows it. */
export interface FaultRecord {
  readonly index: number;
  readonly kind: FaultKind;
  readonly atMs: number;
  readonly durationMs: number;
  readonly target: string;
  readonly tookMs: number;
  readonly note: string;
}

/** A violation with the replicas' log lines about it. */
export interface ReportedViolation extends Violation {
  readonly lines: readonly string[];
}

/** What one seed gave. */
export interface SeedResult {
  readonly seed: number;
  readonly schedule: Schedule;
  readonly faults: readonly FaultRecord[];
  readonly injected: Record<FaultKind, number>;
  readonly violations: readonly ReportedViolation[];
  readonly notes: readonly string[];
  readonly processes: number;
  readonly stdinWrites: number;
  readonly keyedStarts: number;
  readonly readers: number;
  readonly ms: number;
  /** What failed outside the invariants (the lab did not start …), if anything. */
  readonly error: string | undefined;
}

/** A Buffer as JSON.stringify hands it to a replacer. */
const isBuffer = (value: unknown): value is { type: 'Buffer'; data: number[] } =>
  typeof value === 'object' && value !== null && 'type' in value && value.type === 'Buffer' && 'data' in value && Array.isArray(value.data);

/** The labs of seeds running now, and their workloads (what a signal stops). */
const running = new Set<{ lab: Lab | undefined; workload: Workload | undefined }>();

/** Aborts every running seed's workload and stops its lab (on SIGINT or SIGTERM). Never rejects. */
export async function stopRunning(): Promise<void> {
  await Promise.allSettled(
    [...running].map(async (one) => {
      one.workload?.abort();
      await one.lab?.stop();
    }),
  );
}

const ENVIRONMENT_IDS = (n: number): string[] => Array.from({ length: n }, (_v, i) => `env-${i + 1}`);

/** Runs seed `options.seed` (see the module's doc). Never rejects: a failure outside the checks is the result's `error`. */
export async function runSeed(options: SeedOptions): Promise<SeedResult> {
  const t0 = Date.now();
  const say = options.say ?? (() => undefined);
  const ids = ENVIRONMENT_IDS(options.environments ?? 3);
  const schedule = buildSchedule(options.seed, { faults: options.faults ?? 5, environments: ids.length, replicas: 3 });
  const base = { seed: options.seed, schedule, processes: 0, stdinWrites: 0, keyedStarts: 0, readers: 0 };
  let lab: Lab | undefined;
  let workload: Workload | undefined;
  let nemesis: Nemesis | undefined;
  const live: { lab: Lab | undefined; workload: Workload | undefined } = { lab: undefined, workload: undefined };
  running.add(live);
  try {
    lab = await Lab.start({ environments: ids });
    live.lab = lab;
    say(`seed ${options.seed}: lab up in ${Date.now() - t0} ms; ${schedule.faults.map((f) => `${f.kind}@${(f.atMs / 1000).toFixed(1)}s`).join(', ')}`);
    const via = options.via === undefined ? {} : { via: options.via };
    workload = new Workload({ lab, environments: ids, random: new Prng(options.seed).fork('workload'), lengthMs: schedule.lengthMs, ...via });
    live.workload = workload;
    await workload.begin();
    nemesis = new Nemesis(lab, schedule, ids);
    await nemesis.run();
    await nemesis.healAll();
    say(`seed ${options.seed}: schedule done at ${Math.round((Date.now() - t0) / 1000)} s; the workload ends`);
    await workload.finish(30_000);
    await nemesis.scrapeAll();
    const known = workload.history.processes.map((tracked) => ({ environmentId: tracked.plan.environmentId, processId: tracked.processId }));
    if (lab.audit === undefined) throw new Error('the lab has no Redis client');
    const audit = await auditRedis(lab.audit, ids, known);
    const runEnd = Date.now();
    const { applied, unaccounted, drains } = nemesis;
    const facts = { history: workload.history, applied, audit, unexpected: lab.executors?.unexpected ?? [], unaccounted, drains, runEnd };
    const verdict = checkInvariants(facts);
    verdict.notes.push(...lab.notes.map((note) => `lab: ${note}`));
    const lines = lab.lines();
    if (verdict.violations.length > 0 && options.logDir !== undefined) writeLogs(options.logDir, options.seed, lab, { history: workload.history, audit, applied: nemesis.applied });
    return { ...base, ...counts(workload), faults: records(applied), injected: injected(applied), ...excerpts(verdict, lines), ms: Date.now() - t0, error: undefined };
  } catch (error: unknown) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return {
      ...base,
      ...(workload === undefined ? {} : counts(workload)),
      faults: records(nemesis?.applied ?? []),
      injected: injected(nemesis?.applied ?? []),
      violations: [],
      notes: [],
      ms: Date.now() - t0,
      error: message,
    };
  } finally {
    workload?.abort();
    await lab?.stop();
    await workload?.quiet();
    running.delete(live);
  }
}

function counts(workload: Workload): Pick<SeedResult, 'processes' | 'stdinWrites' | 'keyedStarts' | 'readers'> {
  const { history } = workload;
  const stdinWrites = history.stdins.reduce((n, s) => n + s.writes.length, 0);
  return { processes: history.processes.length, stdinWrites, keyedStarts: history.starts.length, readers: history.readers.length };
}

function records(applied: readonly AppliedFault[]): FaultRecord[] {
  return applied.map((fault) => ({
    index: fault.planned.index,
    kind: fault.kind,
    atMs: fault.planned.atMs,
    durationMs: fault.planned.durationMs,
    target: fault.target,
    tookMs: fault.end - fault.start,
    note: [
      fault.kind === 'replica-pause' ? (fault.planned.cut ? 'cut its connections' : 'connections left') : '',
      fault.kind === 'lb-hold' ? `end ${fault.planned.holdEnd}` : '',
      fault.skipped ?? '',
      fault.error === undefined ? '' : `error: ${fault.error}`,
    ]
      .filter((part) => part !== '')
      .join('; '),
  }));
}

const injected = (applied: readonly AppliedFault[]): Record<FaultKind, number> => countKinds(applied.filter((fault) => fault.skipped === undefined));

/** Each violation with up to 40 replica log lines about it (its environment or process, in its window; warnings first). */
function excerpts(verdict: Verdict, lines: readonly ReplicaLine[]): Pick<SeedResult, 'violations' | 'notes'> {
  const violations = verdict.violations.map((violation) => {
    const [from, to] = violation.window ?? [0, Number.MAX_SAFE_INTEGER];
    const about = lines.filter((line) => {
      if (line.at < from - 3_000 || line.at > to + 3_000) return false;
      if (violation.processId !== undefined && line.msg.includes(violation.processId)) return true;
      if (violation.environmentId !== undefined) return line.msg.includes(`environment ${violation.environmentId}`) || line.msg.includes(` ${violation.environmentId}:`);
      return line.level === 'warn' || line.level === 'error';
    });
    const shown = about.length <= 40 ? about : about.slice(-40);
    return { ...violation, lines: shown.map((line) => `${new Date(line.at).toISOString().slice(11, 23)} ${line.who} ${line.level} ${line.msg}`) };
  });
  return { violations, notes: verdict.notes };
}

/**
 * Writes every incarnation's stderr lines to `<dir>/seed-<seed>/<name>-<n>.log`, and what the workload did
 * and Redis held to `history.json` there (output bytes as their length).
 */
function writeLogs(dir: string, seed: number, lab: Lab, facts: object): void {
  const where = join(dir, `seed-${seed}`);
  mkdirSync(where, { recursive: true });
  const json = JSON.stringify(facts, (_key, value: unknown) => (value instanceof Map ? Object.fromEntries(value) : isBuffer(value) ? `<${value.data.length} B>` : value), 1);
  writeFileSync(join(where, 'history.json'), json);
  for (const slot of lab.slots.values()) {
    for (const proc of slot.incarnations) {
      const text = proc.lines.map((line) => `${new Date(line.at).toISOString()} ${line.level} ${line.msg}`).join('\n');
      writeFileSync(join(where, `${proc.who.replace('#', '-')}.log`), `${text}\n`);
    }
  }
}
