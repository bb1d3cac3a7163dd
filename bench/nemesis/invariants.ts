/**
 * The invariants checked after each schedule, against the workload's own history and what Redis holds
 * (see README "Replicas on Redis" and issue 38). A fault justifies a loss only where it can cause one:
 * Redis restarted without its data, or crashed with its AOF (a second of writes), justifies `truncated`
 * markers and a process Redis no longer knows; an executor restart justifies `lost` (its processes die
 * with it) and markers, and so does a data loss followed by a replica's death, for a process `lost`
 * because no replica has its executor's session record any more. Nothing else does.
 */
import type { UnexpectedExit } from './lab-executors';
import type { AppliedFault, DrainExit } from './nemesis';
import type { History, TrackedProcess } from './history';
import { checkStarts, checkWriters } from './invariants-store';
import { checkReaders } from './invariants-readers';
import type { RedisAudit } from './redis-audit';

/** Every invariant, by name. */
export const INVARIANTS = [
  'output',
  'exit-code',
  'stdin-once',
  'keyed-start-once',
  'process-ends',
  'executors-stay',
  'one-writer-per-epoch',
  'take-back-accounted',
  'drain-exits-0',
  'progress',
  'lab',
] as const;

/** An invariant's name. */
export type Invariant = (typeof INVARIANTS)[number];

/** One violation: which invariant, what, and about what (for the log excerpt). */
export interface Violation {
  readonly invariant: Invariant;
  readonly detail: string;
  readonly environmentId?: string;
  readonly processId?: string;
  /** The time window the violation is about (ms), for the replicas' log lines. */
  readonly window?: readonly [number, number];
}

/** What a run gives the checks. */
export interface RunFacts {
  readonly history: History;
  readonly applied: readonly AppliedFault[];
  readonly audit: RedisAudit;
  readonly unexpected: readonly UnexpectedExit[];
  readonly unaccounted: ReadonlyMap<string, { readonly value: number; readonly present: boolean }>;
  readonly drains: readonly DrainExit[];
  readonly runEnd: number;
}

/** The checks' verdict: violations, and notes (a check not available, a justified loss). */
export interface Verdict {
  readonly violations: Violation[];
  readonly notes: string[];
}

/** Whether `fault` loses Redis's data: restarted empty, or crashed with its AOF (a second of writes). */
const isDataLoss = (fault: AppliedFault): boolean => fault.kind === 'redis-restart-empty' || fault.kind === 'redis-crash-aof';

/** The faults that justify losses (see the module's doc). */
export class Justifications {
  constructor(private readonly applied: readonly AppliedFault[]) {}

  /** A Redis data loss that ended at or after `from` (it may have taken what a process wrote from then on). */
  dataLoss(from: number): AppliedFault | undefined {
    return this.applied.find((fault) => fault.skipped === undefined && isDataLoss(fault) && fault.end >= from);
  }

  /** A restart of `environmentId`'s executor overlapping `from`..`to`. */
  executorRestart(environmentId: string, from: number, to: number): AppliedFault | undefined {
    return this.applied.find((fault) => fault.kind === 'executor-restart' && fault.target === environmentId && fault.start <= to && fault.end >= from);
  }

  /**
   * A loss of an executor's session record before `until`: Redis lost its data (the record with it), and
   * then a replica was killed (the owner, before its round wrote the record back): the next owner has no
   * record of the session to take it back, and its processes are `lost`. Both faults, in that order.
   */
  sessionLoss(until: number): readonly [AppliedFault, AppliedFault] | undefined {
    for (const lost of this.applied.filter((fault) => fault.skipped === undefined && isDataLoss(fault) && fault.start <= until)) {
      const kill = this.applied.find((fault) => fault.skipped === undefined && fault.kind === 'replica-kill' && fault.start >= lost.start && fault.start <= until);
      if (kill !== undefined) return [lost, kill];
    }
    return undefined;
  }

  /** Why a loss of `tracked`'s is justified, or undefined. */
  loss(tracked: TrackedProcess, until: number): string | undefined {
    const from = tracked.start.firstAt;
    const lost = this.dataLoss(from);
    if (lost !== undefined) return `fault ${lost.planned.index} ${lost.kind}`;
    const restart = this.executorRestart(tracked.plan.environmentId, from, tracked.endedAt ?? until);
    return restart === undefined ? undefined : `fault ${restart.planned.index} executor-restart`;
  }
}

/** Checks every invariant (see the module's doc). */
export function checkInvariants(facts: RunFacts): Verdict {
  const verdict: Verdict = { violations: [], notes: [] };
  const why = new Justifications(facts.applied);
  for (const tracked of facts.history.processes) checkProcess(facts, why, tracked, verdict);
  checkStarts(facts, why, verdict);
  checkWriters(facts.audit, verdict);
  for (const exit of facts.unexpected) {
    const detail = `executor ${exit.environmentId} exited (code ${String(exit.code)}, signal ${String(exit.signal)}) without the nemesis: ${exit.stderr.join(' | ').slice(-600)}`;
    verdict.violations.push({ invariant: 'executors-stay', detail, environmentId: exit.environmentId, window: [exit.at - 15_000, exit.at + 1_000] });
  }
  for (const [who, scraped] of facts.unaccounted) {
    if (scraped.value > 0) verdict.violations.push({ invariant: 'take-back-accounted', detail: `replica ${who}: exec_rx_host_take_back_unaccounted_total = ${scraped.value}` });
  }
  if (![...facts.unaccounted.values()].some((scraped) => scraped.present)) {
    verdict.notes.push('take-back-accounted: no replica has exec_rx_host_take_back_unaccounted_total yet (absent counts as 0)');
  }
  for (const drain of facts.drains) {
    if (drain.code !== 0 || !drain.inTime) {
      const detail = `drained ${drain.who} ended with code ${String(drain.code)} signal ${String(drain.signal)} after ${drain.ms} ms${drain.inTime ? '' : ' (killed: late)'}`;
      verdict.violations.push({ invariant: 'drain-exits-0', detail });
    }
  }
  for (const fault of facts.applied) {
    if (fault.error === undefined) continue;
    verdict.violations.push({ invariant: 'lab', detail: `fault ${fault.planned.index} ${fault.kind} on ${fault.target}: ${fault.error}`, window: [fault.start, fault.end] });
  }
  if (facts.audit.error !== undefined) verdict.notes.push(`the Redis audit failed: ${facts.audit.error}`);
  const refused = facts.history.refusedReads;
  if (refused.length > 0) {
    verdict.notes.push(`${refused.length} read(s) of a process answered 503 ENVIRONMENT_ELSEWHERE (reads are never refused, says the README), the first: ${refused[0] ?? ''}`);
  }
  return verdict;
}

/** A process's readers, exit code, end and stdin. */
function checkProcess(facts: RunFacts, why: Justifications, tracked: TrackedProcess, verdict: Verdict): void {
  const { plan, processId } = tracked;
  const about = { environmentId: plan.environmentId, processId, window: [tracked.start.firstAt, tracked.endedAt ?? facts.runEnd] as const };
  const add = (invariant: Invariant, detail: string): void => void verdict.violations.push({ invariant, detail: `${plan.tag} (${processId}): ${detail}`, ...about });
  const justified = why.loss(tracked, facts.runEnd);
  const final = tracked.final;
  const lost = final?.state === 'lost';
  const stdin = facts.history.stdins.find((one) => one.processId === processId);
  const readers = facts.history.readers.filter((one) => one.processId === processId);
  for (const [invariant, problem, names] of checkReaders(tracked, readers, stdin, why, facts.runEnd, verdict.notes)) add(invariant, `${names.join(', ')}: ${problem}`);
  // The cluster no longer knows it: only a Redis data loss since it started can justify that (checked first:
  // such a process has no end the workload saw).
  const forgotten = final?.state.startsWith('answer ') === true;
  if (final !== undefined && forgotten) {
    const gone = why.dataLoss(tracked.start.firstAt);
    if (gone === undefined) add('process-ends', `the cluster no longer knows it (${final.state} ${final.error ?? ''}) and Redis lost no data`);
    else verdict.notes.push(`${plan.tag}: the cluster no longer knows it (${final.state} ${final.error ?? ''}): gone with Redis's data (fault ${gone.planned.index})`);
  } else if (final === undefined || tracked.endedAt === undefined) {
    add('process-ends', `never ended: the API says ${final?.state ?? 'nothing'}${final?.error === null || final?.error === undefined ? '' : ` ${final.error}`}`);
  } else if (final.state === 'closed') {
    if (final.exitCode !== plan.exitCode) add('exit-code', `closed with exit code ${String(final.exitCode)}, expected ${plan.exitCode}`);
  } else if (lost) {
    if (final.error === null || !/message/.test(final.error)) add('process-ends', 'lost without a reason');
    const restart = why.executorRestart(plan.environmentId, tracked.start.firstAt, tracked.endedAt);
    const session = /no record of its executor's session/.test(final.error ?? '') ? why.sessionLoss(tracked.endedAt) : undefined;
    if (restart === undefined && session === undefined) add('process-ends', `lost with no executor restart (or session record lost) that justifies it: ${final.error ?? ''}`);
    else if (restart === undefined && session !== undefined) {
      const [data, kill] = session;
      verdict.notes.push(`${plan.tag}: lost, its session's record gone with Redis's data (fault ${data.planned.index}) and a replica (fault ${kill.planned.index})`);
    }
  } else {
    add('process-ends', `ended as ${final.state}${final.error === null ? '' : ` ${final.error}`}`);
  }
  // A process gone with Redis's data takes no stdin any more (justified above, or said there).
  if (stdin !== undefined && !forgotten) {
    if (!stdin.ended && !lost) add('progress', `stdin/end was never accepted: ${stdin.endTrail.slice(-6).join(', ')}`);
    for (const write of stdin.writes.filter((one) => one.outcome !== 'accepted')) {
      if (!lost && justified === undefined) add('progress', `stdin write ${write.writeId} never accepted after ${write.attempts} attempt(s): ${write.trail.slice(-6).join(', ')}`);
    }
  }
}
