/**
 * The invariants read from Redis itself: each keyed start made exactly one process (found by the tag its
 * argv carries), and at most one replica wrote an environment's logs at any epoch (the `w` and `p` fields
 * of every stream entry; "not available" until the host writes them).
 */
import type { RunFacts, Verdict, Justifications } from './invariants';
import { tagOf } from './plans';
import type { RedisAudit } from './redis-audit';

/** A process record Redis holds for a tag. */
interface StartRecord {
  readonly id: string;
  readonly state: string;
  /** Its last seq, its writer's epoch, whether released. */
  readonly detail: string;
}

/** Every keyed start: one process, the one it was answered with; none for a START_UNKNOWN; never two. */
export function checkStarts(facts: RunFacts, why: Justifications, verdict: Verdict): void {
  const byTag = new Map<string, StartRecord[]>();
  for (const process of facts.audit.processes) {
    let argv: unknown;
    try {
      argv = JSON.parse(process.meta['argv'] ?? '[]');
    } catch {
      argv = [];
    }
    const tag = Array.isArray(argv) ? tagOf(argv.map(String)) : undefined;
    const { meta } = process;
    const detail = `lastSeq ${meta['lastSeq'] ?? '?'}, epoch ${meta['epoch'] ?? '?'}${meta['released'] === '1' ? ', released' : ''}`;
    const record = { id: process.processId, state: meta['state'] ?? '?', detail };
    if (tag !== undefined) byTag.set(tag, [...(byTag.get(tag) ?? []), record]);
  }
  for (const start of facts.history.starts) {
    const { key, plan } = start;
    const about = { environmentId: plan.environmentId, window: [start.firstAt, start.lastAt] as const };
    const add = (invariant: 'keyed-start-once' | 'progress', detail: string): void => void verdict.violations.push({ invariant, detail: `key ${key}: ${detail}`, ...about });
    const lossBetween = why.dataLoss(start.firstAt);
    const records = byTag.get(plan.tag) ?? [];
    // A record the executor never ran (its start was lost with a socket) is `lost`: it made no process.
    const ran = records.filter((record) => record.state !== 'lost');
    const said = (list: readonly StartRecord[]): string => list.map((record) => `${record.id} (${record.state}, ${record.detail})`).join('; ');
    if (start.ids.length > 1) {
      if (lossBetween === undefined || lossBetween.start > start.lastAt) add('keyed-start-once', `answered with ${start.ids.length} processes: ${start.ids.join(', ')}`);
      else verdict.notes.push(`key ${key}: two processes after Redis lost its data (fault ${lossBetween.planned.index})`);
    }
    if (ran.length > 1 && lossBetween === undefined) add('keyed-start-once', `${ran.length} processes in Redis carry its tag: ${said(records)}`);
    switch (start.outcome) {
      case 'started': {
        const id = start.ids[0] ?? '';
        if (records.length === 0 && lossBetween === undefined) add('keyed-start-once', `answered ${id}, which Redis does not hold`);
        if (records.length > 0 && !records.some((record) => record.id === id)) add('keyed-start-once', `answered ${id}, Redis holds ${said(records)} for it`);
        break;
      }
      case 'unknown':
        // START_UNKNOWN: "it did not start, or was lost; start it again with a new key".
        if (ran.length > 0) add('keyed-start-once', `answered 409 START_UNKNOWN ("it did not start, or was lost"), yet made ${said(ran)}`);
        break;
      case 'failed':
      case 'pending':
        add('progress', `no process after ${start.attempts} attempt(s) over ${Math.round((start.lastAt - start.firstAt) / 1000)} s: ${start.trail.slice(-8).join(', ')}`);
        break;
    }
  }
}

/** At most one writer per environment and epoch; a stream's epochs never go back (see the module's doc). */
export function checkWriters(audit: RedisAudit, verdict: Verdict): void {
  const entries = audit.processes.flatMap((process) => process.entries);
  const marked = entries.filter((entry) => entry.writer !== undefined && entry.epoch !== undefined);
  if (marked.length === 0) {
    verdict.notes.push(`one-writer-per-epoch: not available (none of ${entries.length} stream entries carries w and p)`);
    return;
  }
  if (marked.length < entries.length) verdict.notes.push(`one-writer-per-epoch: ${entries.length - marked.length} of ${entries.length} stream entries carry no w/p`);
  const writers = new Map<string, Map<number, Set<string>>>();
  for (const process of audit.processes) {
    const byEpoch = writers.get(process.environmentId) ?? new Map<number, Set<string>>();
    writers.set(process.environmentId, byEpoch);
    let last: { seq: number; epoch: number } | undefined;
    for (const entry of process.entries) {
      if (entry.writer === undefined || entry.epoch === undefined) continue;
      byEpoch.set(entry.epoch, (byEpoch.get(entry.epoch) ?? new Set<string>()).add(entry.writer));
      if (last !== undefined && entry.epoch < last.epoch) {
        const detail = `${process.processId}: seq ${entry.seq} written at epoch ${entry.epoch} after seq ${last.seq} at epoch ${last.epoch} (a stale writer appended)`;
        verdict.violations.push({ invariant: 'one-writer-per-epoch', detail, environmentId: process.environmentId, processId: process.processId });
      }
      last = { seq: entry.seq, epoch: entry.epoch };
    }
  }
  for (const [environmentId, byEpoch] of writers) {
    for (const [epoch, who] of byEpoch) {
      if (who.size <= 1) continue;
      const detail = `environment ${environmentId}: epoch ${epoch} written by ${[...who].join(' and ')}`;
      verdict.violations.push({ invariant: 'one-writer-per-epoch', detail, environmentId });
    }
  }
}
