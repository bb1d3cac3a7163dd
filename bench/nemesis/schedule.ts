/**
 * The nemesis's fault schedule, built from a seed alone (`./prng`): which faults, when (from the
 * schedule's start), for how long, aimed at what. A replica-level fault names an environment whose owner
 * it aims at (resolved when it is applied: ownership moves) and a replica to fall back on; a Redis-level
 * fault is the Redis server's; an executor restart names its environment. The seed replays the schedule,
 * not the interleaving of the real processes under it.
 */
import { Prng } from './prng';

/** Every kind of fault the nemesis injects. */
export const FAULT_KINDS = [
  'replica-kill',
  'replica-pause',
  'drain',
  'lb-cut',
  'lb-blackhole',
  'lb-hold',
  'redis-cut',
  'redis-blackhole',
  'redis-restart-aof',
  'redis-crash-aof',
  'redis-restart-empty',
  'executor-restart',
] as const;

/** A kind of fault: see {@link FAULT_KINDS} and `./nemesis` for what each does. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** What a fault acts on: a replica (or its proxies), the Redis server, or an environment's executor. */
export type FaultScope = 'replica' | 'redis' | 'executor';

/** The scope of each kind. */
export const SCOPE: Readonly<Record<FaultKind, FaultScope>> = {
  'replica-kill': 'replica',
  'replica-pause': 'replica',
  drain: 'replica',
  'lb-cut': 'replica',
  'lb-blackhole': 'replica',
  'lb-hold': 'replica',
  'redis-cut': 'replica',
  'redis-blackhole': 'replica',
  'redis-restart-aof': 'redis',
  'redis-crash-aof': 'redis',
  'redis-restart-empty': 'redis',
  'executor-restart': 'executor',
};

/** Each kind's duration range (ms): down time, pause, partition, hold (0 for a fault of one instant). */
const DURATION: Readonly<Record<FaultKind, readonly [number, number]>> = {
  'replica-kill': [500, 5_000],
  'replica-pause': [2_000, 9_000],
  drain: [0, 0],
  'lb-cut': [0, 3_000],
  'lb-blackhole': [1_500, 8_000],
  'lb-hold': [3_000, 9_000],
  'redis-cut': [0, 3_000],
  'redis-blackhole': [1_000, 8_000],
  'redis-restart-aof': [0, 1_500],
  'redis-crash-aof': [0, 1_500],
  'redis-restart-empty': [0, 1_500],
  'executor-restart': [0, 2_000],
};

/** How long a fault keeps its target busy beyond its duration (a restart, a drain's exit). */
const AFTER: Readonly<Record<FaultKind, number>> = {
  'replica-kill': 2_500,
  'replica-pause': 500,
  drain: 9_000,
  'lb-cut': 500,
  'lb-blackhole': 500,
  'lb-hold': 500,
  'redis-cut': 500,
  'redis-blackhole': 500,
  'redis-restart-aof': 1_000,
  'redis-crash-aof': 1_000,
  'redis-restart-empty': 1_000,
  'executor-restart': 2_000,
};

/** One fault as planned. */
export interface PlannedFault {
  /** Its place in the schedule, from 1. */
  readonly index: number;
  readonly kind: FaultKind;
  /** When it starts, from the schedule's start (ms). */
  readonly atMs: number;
  /** How long it lasts (ms; see {@link FaultKind}). */
  readonly durationMs: number;
  /** The environment (index) whose owner a replica-level fault aims at, or whose executor restarts. */
  readonly environment: number;
  /** The replica (index) a replica-level fault falls back on when the owner is busy or unknown. */
  readonly replica: number;
  /** replica-pause: its balancer connections are cut once it is stopped (its executors re-dial meanwhile). */
  readonly cut: boolean;
  /** lb-hold: what a held connection's target gets of a client that left (see `HoldEnd`). */
  readonly holdEnd: 'forward' | 'keep';
}

/** A seed's schedule. */
export interface Schedule {
  readonly seed: number;
  readonly faults: readonly PlannedFault[];
  /** When the last fault should be over (ms from the start). */
  readonly lengthMs: number;
}

/** What a schedule is built for. */
export interface ScheduleOptions {
  /** How many faults. */
  readonly faults: number;
  /** How many environments (executors). */
  readonly environments: number;
  /** How many replicas. */
  readonly replicas: number;
  /** The kinds to draw from. @default FAULT_KINDS */
  readonly kinds?: readonly FaultKind[];
  /** When the first fault starts (ms): the workload is under way by then. @default 3000 */
  readonly firstAtMs?: number;
}

/** When a planned fault stops keeping its target busy (ms from the start). */
export const busyUntil = (fault: PlannedFault): number => fault.atMs + fault.durationMs + AFTER[fault.kind];

/**
 * The schedule of `seed`: faults one after another, 1.5 to 5 s apart, each drawn from the kinds; one that
 * would overlap another of the Redis scope, or another restart of the same executor, or a third
 * replica-level fault, is moved after them (so that at least one replica is never under a fault).
 */
export function buildSchedule(seed: number, options: ScheduleOptions): Schedule {
  const random = new Prng(seed).fork('schedule');
  const kinds = options.kinds ?? FAULT_KINDS;
  const faults: PlannedFault[] = [];
  let at = options.firstAtMs ?? 3_000;
  for (let index = 1; index <= options.faults; index++) {
    const kind = random.pick(kinds);
    const [min, max] = DURATION[kind];
    const planned: PlannedFault = {
      index,
      kind,
      atMs: at,
      durationMs: random.int(min, max),
      environment: random.int(0, options.environments - 1),
      replica: random.int(0, options.replicas - 1),
      cut: random.chance(0.7),
      holdEnd: random.chance(0.6) ? 'forward' : 'keep',
    };
    const start = clear(planned, faults);
    faults.push({ ...planned, atMs: start });
    at = start + random.int(1_500, 5_000);
  }
  return { seed, faults, lengthMs: Math.max(0, ...faults.map(busyUntil)) };
}

/** The earliest start at or after `fault.atMs` at which it clashes with none of `before` (see {@link buildSchedule}). */
function clear(fault: PlannedFault, before: readonly PlannedFault[]): number {
  let start = fault.atMs;
  for (;;) {
    const active = before.filter((other) => other.atMs <= start && busyUntil(other) > start);
    const clashes = active.filter((other) => {
      if (SCOPE[fault.kind] === 'redis') return SCOPE[other.kind] === 'redis';
      if (SCOPE[fault.kind] === 'executor') return SCOPE[other.kind] === 'executor' && other.environment === fault.environment;
      return SCOPE[other.kind] === 'replica' && active.filter((one) => SCOPE[one.kind] === 'replica').length >= 2;
    });
    if (clashes.length === 0) return start;
    start = Math.min(...clashes.map(busyUntil));
  }
}

/** The kinds of `faults`, counted. */
export function countKinds(faults: readonly { readonly kind: FaultKind }[]): Record<FaultKind, number> {
  const counts = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>;
  for (const fault of faults) counts[fault.kind] += 1;
  return counts;
}
