/**
 * The workload's processes, each with output and an exit code known in advance: a stream of numbered
 * lines over the whole schedule, an echo of its stdin (`cat`), and short keyed ones; and the keyed start
 * (`POST …/processes` with an `Idempotency-Key`), retried through faults with the same key, recording
 * every answer.
 */
import type { KeyedStart, PlannedProcess } from './history';
import type { Target } from './http';
import { codeOf, jsonOf, retrying } from './http';

/** 4 numbered lines (`TAG 00001 PAD`) every 0.2 s, `$1` lines in all, then exit `$3`. */
const STREAM = [
  'i=1; while [ $i -le $1 ]; do',
  "j=0; while [ $j -lt 4 ] && [ $i -le $1 ]; do printf '%s %05d %s\\n' \"$0\" $i \"$2\"; i=$((i+1)); j=$((j+1)); done;",
  'sleep 0.2; done; exit $3',
].join(' ');
/** Its stdin to its stdout, then exit `$1`. */
const ECHO = 'cat; exit $1';
/** `$1` lines (`TAG tick N`) ten a second, then exit `$2`. */
const SHORT = 'i=1; while [ $i -le $1 ]; do echo "$0 tick $i"; i=$((i+1)); sleep 0.1; done; exit $2';
/** The stream's padding: each line ~80 bytes. */
const PAD = 'the-quick-brown-fox-jumps-over-the-lazy-dog-0123456789';

/** A stream of `lines` lines (20 a second) exiting `exitCode`. */
export function streamPlan(environmentId: string, tag: string, lines: number, exitCode: number): PlannedProcess {
  const expected = Array.from({ length: lines }, (_v, i) => `${tag} ${String(i + 1).padStart(5, '0')} ${PAD}\n`).join('');
  return { role: 'stream', environmentId, tag, argv: ['sh', '-c', STREAM, tag, String(lines), PAD, String(exitCode)], expected, exitCode };
}

/** An echo of its stdin exiting `exitCode` once its stdin ends. */
export function echoPlan(environmentId: string, tag: string, exitCode: number): PlannedProcess {
  return { role: 'echo', environmentId, tag, argv: ['sh', '-c', ECHO, tag, String(exitCode)], expected: undefined, exitCode };
}

/** `ticks` lines ten a second, exiting `exitCode`. */
export function shortPlan(environmentId: string, tag: string, ticks: number, exitCode: number): PlannedProcess {
  const expected = Array.from({ length: ticks }, (_v, i) => `${tag} tick ${i + 1}\n`).join('');
  return { role: 'short', environmentId, tag, argv: ['sh', '-c', SHORT, tag, String(ticks), String(exitCode)], expected, exitCode };
}

/** The tag a process's argv carries (its `$0`), if it is one of the workload's. */
export const tagOf = (argv: readonly string[]): string | undefined => (argv[0] === 'sh' && argv[1] === '-c' ? argv[3] : undefined);

/** Where and as whom the workload calls. */
export interface Caller {
  /** The balancer's url. */
  readonly base: string;
  /** Where a call goes, in order: the balancer, then (unless the workload goes through the balancer alone) each replica. */
  readonly targets: () => readonly Target[];
  readonly token: string;
  /** The name of a replica by its id (for the trails). */
  readonly who: (replicaId: string) => string | undefined;
  /** True once the run is ending: retries stop. */
  readonly stopping: () => boolean;
}

/** The path of an environment's processes. */
export const processesPath = (environmentId: string): string => `/api/v1/environments/${encodeURIComponent(environmentId)}/processes`;

/**
 * Starts `plan` with `key`, retrying through faults (same key) for up to `deadlineMs`; with `replay`,
 * sends it once more after it started (as a client that lost the answer would: the same process must
 * come back). Records every attempt in the returned (and `starts`-pushed) record.
 */
export async function keyedStart(caller: Caller, plan: PlannedProcess, key: string, starts: KeyedStart[], replay: boolean, deadlineMs = 30_000): Promise<KeyedStart> {
  const start: KeyedStart = { key, plan, firstAt: Date.now(), lastAt: Date.now(), attempts: 0, trail: [], outcome: 'pending', ids: [] };
  starts.push(start);
  const body = { argv: plan.argv, ...(plan.role === 'echo' ? { pipeStdin: true } : {}) };
  for (let round = 0; round < (replay ? 2 : 1); round++) {
    const sent = await retrying(caller.targets, processesPath(plan.environmentId), {
      method: 'POST',
      headers: { authorization: `Bearer ${caller.token}`, 'idempotency-key': key },
      json: body,
      timeoutMs: 10_000,
      deadlineMs,
      stop: caller.stopping,
      who: caller.who,
    });
    start.attempts += sent.attempts;
    start.trail.push(...sent.trail);
    start.lastAt = Date.now();
    const answer = sent.answer;
    if (answer !== undefined && (answer.status === 200 || answer.status === 201)) {
      const parsed = jsonOf(answer);
      const id = typeof parsed === 'object' && parsed !== null && 'id' in parsed && typeof parsed.id === 'string' ? parsed.id : '';
      if (!start.ids.includes(id)) start.ids.push(id);
      if (start.outcome === 'pending') start.outcome = 'started';
    } else if (answer?.status === 409 && codeOf(answer) === 'START_UNKNOWN') {
      start.outcome = start.outcome === 'pending' ? 'unknown' : start.outcome;
      return start;
    } else if (start.outcome === 'pending') {
      start.outcome = 'failed';
      return start;
    }
  }
  return start;
}
