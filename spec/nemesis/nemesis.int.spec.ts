/**
 * Issue 38, the nemesis in `npm test`: a few fixed seeds of fault schedules (bench/nemesis/schedule.ts)
 * against a live cluster of real parts (bench/nemesis/lab.ts: redis-server with its AOF, three replicas of
 * the built `exec-rx host --redis-url-file`, HAProxy running the README's configuration, a real executor
 * per environment), with the workload running through them (bench/nemesis/workload.ts) and every
 * invariant checked after each (bench/nemesis/invariants.ts). The seeds were chosen so that between them
 * every fault kind is injected (the first test checks it: a change of the schedule's drawing must pick
 * new ones). A failing seed replays with `npm run nemesis -- --seed <seed>`; its violations come with the
 * replicas' log lines about each. Needs the build (`npm run build`), redis-server and haproxy.
 */
import { requireHaproxy } from '../../bench/lib/haproxy';
import { requireRedisServer } from '../../bench/lib/redis-server';
import type { SeedResult } from '../../bench/nemesis/run-seed';
import { runSeed, stopRunning } from '../../bench/nemesis/run-seed';
import { buildSchedule, FAULT_KINDS } from '../../bench/nemesis/schedule';

/** Between them, every fault kind (a replica's pause with its connections cut); about 45 s of faults in all. */
const SEEDS = [260, 376, 562];
/** Faults per schedule: `npm run nemesis`'s default, so that a seed replays as it ran here. */
const FAULTS = 5;
/** One seed: the lab's start, its schedule (~15 s), the workload's end (its streams outlast the schedule by 10 s), the checks; bounded. */
const SEED_TIMEOUT_MS = 180_000;

/** A seed's violations as lines, each with the last log lines about it. */
function said(result: SeedResult): string[] {
  const lines = result.violations.map((violation) => [`${violation.invariant}: ${violation.detail}`, ...violation.lines.slice(-12).map((line) => `    ${line}`)].join('\n'));
  return result.error === undefined ? lines : [`error: ${result.error}`, ...lines];
}

describe('the nemesis: seeded fault schedules against three replicas behind HAProxy', () => {
  beforeAll(() => {
    requireRedisServer();
    requireHaproxy();
  });
  afterAll(() => stopRunning());

  it('the fixed seeds inject every fault kind between them', () => {
    const kinds = new Set(SEEDS.flatMap((seed) => buildSchedule(seed, { faults: FAULTS, environments: 3, replicas: 3 }).faults.map((fault) => fault.kind)));
    expect([...kinds].sort()).toEqual([...FAULT_KINDS].sort());
  });

  it.each(SEEDS)(
    'seed %i: every invariant holds (npm run nemesis -- --seed SEED replays it)',
    async (seed) => {
      const result = await runSeed({ seed, faults: FAULTS });
      expect(said(result)).toEqual([]);
      expect(result.faults.filter((fault) => fault.note.includes('no replica free'))).toEqual([]);
    },
    SEED_TIMEOUT_MS,
  );
});
