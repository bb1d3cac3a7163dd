/**
 * The workload's own history (independent of the cluster): what it started and expects of each process,
 * every keyed start's attempts and answers, every stdin write and whether it was accepted, and every
 * event each reader got, segment by segment. The invariants (`./invariants`) check the cluster against it.
 */

/** What a process is for: a stream of known lines, an echo of its stdin, or a short keyed one. */
export type ProcessRole = 'stream' | 'echo' | 'short';

/** A process the workload starts, and what it must give. */
export interface PlannedProcess {
  readonly role: ProcessRole;
  readonly environmentId: string;
  /** Its unique tag (in its argv: how the invariants find every process a key made). */
  readonly tag: string;
  readonly argv: readonly string[];
  /** Its whole output; undefined for an echo (its stdin writes say). */
  readonly expected: string | undefined;
  readonly exitCode: number;
}

/** One keyed start (`POST …/processes` with an `Idempotency-Key`), retried through faults. */
export interface KeyedStart {
  readonly key: string;
  readonly plan: PlannedProcess;
  readonly firstAt: number;
  lastAt: number;
  attempts: number;
  /** Every attempt's status or error, in order. */
  readonly trail: string[];
  /** `started` (201 or 200 replayed), `unknown` (409 START_UNKNOWN: no process, per the host), `failed` (gave up or refused). */
  outcome: 'pending' | 'started' | 'unknown' | 'failed';
  /** Every process id the attempts were answered with (more than one: a key made two processes). */
  readonly ids: string[];
}

/** A process the workload started, and how it ended as the workload saw it. */
export interface TrackedProcess {
  readonly plan: PlannedProcess;
  readonly start: KeyedStart;
  readonly processId: string;
  /** When its start was answered (ms). */
  readonly startedAt: number;
  /** When the workload saw it end (closed, lost, gone), if it did. */
  endedAt?: number;
  /** The API's last answer about it: state, exit code, error. */
  final?: { readonly state: string; readonly exitCode: number | null; readonly error: string | null };
}

/** One stdin write of an echo process. */
export interface StdinWrite {
  readonly writeId: string;
  readonly line: string;
  readonly sentAt: number;
  attempts: number;
  readonly trail: string[];
  outcome: 'pending' | 'accepted' | 'failed';
}

/** An echo process's stdin, as the workload sent it. */
export interface StdinHistory {
  readonly processId: string;
  readonly environmentId: string;
  readonly writes: StdinWrite[];
  /** `stdin/end` accepted. */
  ended: boolean;
  /** Its attempts' places and answers. */
  readonly endTrail: string[];
}

/** One event a reader got. */
export type ReaderEvent =
  | { readonly kind: 'output'; readonly seq: number; readonly data: Buffer; readonly segment: number }
  | { readonly kind: 'truncated'; readonly fromSeq: number; readonly toSeq: number; readonly droppedBytes: number; readonly reason: string | undefined; readonly segment: number }
  | { readonly kind: 'exited'; readonly seq: number; readonly exitCode: number; readonly segment: number }
  | { readonly kind: 'closed'; readonly seq: number; readonly segment: number }
  | { readonly kind: 'failed'; readonly code: string; readonly message: string; readonly segment: number };

/** One connection of a reader: where, from which seq, and how it ended. */
export interface ReaderSegment {
  /** A replica incarnation (`b#2`) or `balancer`. */
  readonly where: string;
  readonly afterSeq: number;
  readonly at: number;
  events: number;
  /** `moved`, `idle`, `closed`, `failed`, `ended`, `error: …`, `refused <status>`. */
  outcome: string;
}

/** A reader of one process's events (see the module's doc). */
export interface ReaderHistory {
  /** `mover` (moves between replicas mid-stream), `late@balancer`, `late@b#2` … */
  readonly name: string;
  readonly processId: string;
  readonly environmentId: string;
  readonly events: ReaderEvent[];
  readonly segments: ReaderSegment[];
  /** `closed`, `failed <code>`, `gave up`, or `refused <status>`. */
  outcome: string;
}

/** Everything the workload did and saw. */
export interface History {
  readonly starts: KeyedStart[];
  readonly processes: TrackedProcess[];
  readonly stdins: StdinHistory[];
  readonly readers: ReaderHistory[];
  /** Reads (a process's resource) a replica refused with 503 ENVIRONMENT_ELSEWHERE: `where path`. */
  readonly refusedReads: string[];
}
