/**
 * The nemesis's own parts that need no cluster (bench/nemesis): the seeded PRNG and schedule (a seed
 * replays its schedule; the schedule keeps Redis faults apart and one replica out of every fault), and the
 * checks the invariants rest on, each shown failing on the history that breaks it: a reader's seqs and
 * bytes against the expected output (silent gaps, seqs twice, silently short, markers and their byte
 * counts), an echo's lines against its stdin writes, and the writers of an environment's log by epoch.
 */
import type { ReaderEvent } from '../../bench/nemesis/history';
import type { Verdict } from '../../bench/nemesis/invariants';
import { Justifications } from '../../bench/nemesis/invariants';
import type { AppliedFault } from '../../bench/nemesis/nemesis';
import { checkWriters } from '../../bench/nemesis/invariants-store';
import { checkBytes, checkEcho, checkEvents } from '../../bench/nemesis/output-check';
import { Prng } from '../../bench/nemesis/prng';
import type { AuditedEntry, RedisAudit } from '../../bench/nemesis/redis-audit';
import { buildSchedule, busyUntil, SCOPE } from '../../bench/nemesis/schedule';

const out = (seq: number, text: string): ReaderEvent => ({ kind: 'output', seq, data: Buffer.from(text), segment: 0 });
const marker = (fromSeq: number, toSeq: number, droppedBytes = 0, reason = 'evicted'): ReaderEvent => ({ kind: 'truncated', fromSeq, toSeq, droppedBytes, reason, segment: 0 });
const end = (seq: number, exitCode = 0): ReaderEvent[] => [
  { kind: 'exited', seq, exitCode, segment: 0 },
  { kind: 'closed', seq: seq + 1, segment: 0 },
];
const EXPECTED = Buffer.from('aaa\nbbb\nccc\nddd\n');

/** The problems `events` have against EXPECTED. */
function problems(events: readonly ReaderEvent[]): string[] {
  const check = checkEvents(events);
  checkBytes(check, EXPECTED);
  return check.problems;
}

describe('the nemesis PRNG and schedule', () => {
  it('replays a seed exactly, and two seeds differ', () => {
    const draws = (seed: number): number[] => Array.from({ length: 8 }, () => new Prng(seed).fork('x').int(0, 1_000_000));
    expect(draws(7)).toEqual(draws(7));
    expect(buildSchedule(19, { faults: 8, environments: 3, replicas: 3 })).toEqual(buildSchedule(19, { faults: 8, environments: 3, replicas: 3 }));
    expect(buildSchedule(19, { faults: 8, environments: 3, replicas: 3 })).not.toEqual(buildSchedule(20, { faults: 8, environments: 3, replicas: 3 }));
  });

  it('never overlaps two Redis faults, and leaves one replica out of every fault', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const { faults } = buildSchedule(seed, { faults: 8, environments: 3, replicas: 3 });
      for (const fault of faults) {
        const active = faults.filter((other) => other.atMs <= fault.atMs && busyUntil(other) > fault.atMs);
        expect(active.filter((other) => SCOPE[other.kind] === 'redis').length).toBeLessThanOrEqual(1);
        expect(active.filter((other) => SCOPE[other.kind] === 'replica').length).toBeLessThanOrEqual(2);
      }
    }
  });
});

describe("the nemesis's output checks", () => {
  it('pass every seq once and the exact bytes', () => {
    expect(problems([out(1, 'aaa\nbbb\n'), out(2, 'ccc\n'), out(3, 'ddd\n'), ...end(4)])).toEqual([]);
  });

  it('find a silent gap, a seq twice, and output silently short', () => {
    expect(problems([out(1, 'aaa\nbbb\n'), out(3, 'ddd\n'), ...end(4)])).toEqual(expect.arrayContaining([expect.stringMatching(/^silent gap: seqs 2\.\.2/)]));
    expect(problems([out(1, 'aaa\nbbb\n'), out(1, 'aaa\nbbb\n'), out(2, 'ccc\nddd\n'), ...end(3)])).toEqual([expect.stringMatching(/^output seq 1 again/)]);
    expect(problems([out(1, 'aaa\nbbb\n'), out(2, 'ccc\n'), ...end(3)])).toEqual([expect.stringMatching(/^output 12 B sha256 .* expected 16 B/)]);
  });

  it("take a marker's hole, check its byte count when it gives one, and want a reason", () => {
    expect(problems([out(1, 'aaa\n'), marker(2, 3, 8), out(4, 'ddd\n'), ...end(5)])).toEqual([]);
    expect(problems([marker(1, 3), out(4, 'ddd\n'), ...end(5)])).toEqual([]);
    expect(problems([out(1, 'aaa\n'), marker(2, 4), ...end(5)])).toEqual([]);
    expect(problems([out(1, 'aaa\n'), marker(2, 3, 4), out(4, 'ddd\n'), ...end(5)])).toEqual(['marker 2..3 says 4 B dropped, the hole is 8 B']);
    expect(problems([out(1, 'aaa\n'), marker(2, 3, 0, ''), out(4, 'ddd\n'), ...end(5)])).toEqual(['marker 2..3 without a reason']);
    // An exit lost with what the marker covers: the close alone follows it.
    expect(checkEvents([out(1, 'aaa\n'), marker(2, 4), { kind: 'closed', seq: 5, segment: 0 }]).problems).toEqual([]);
    expect(checkEvents([out(1, 'aaa\n'), { kind: 'closed', seq: 2, segment: 0 }]).problems).toEqual(['closed without an exited event before it']);
    const lost = problems([out(1, 'aaa\n'), marker(2, 3), out(4, 'xxx\n'), ...end(5)]);
    expect(lost).toEqual(expect.arrayContaining([expect.stringMatching(/^the 4 B after marker 2\.\.3 are not found/)]));
  });

  it("check an echo's lines against its stdin: each once, in order, every accepted one", () => {
    const writes = ['one\n', 'two\n', 'three\n'].map((line) => ({ line, outcome: 'accepted' }));
    expect(checkEcho('one\ntwo\nthree\n', writes, true)).toEqual([]);
    expect(checkEcho('one\ntwo\ntwo\nthree\n', writes, true)).toEqual(['stdin line 2 arrived twice: "two"']);
    expect(checkEcho('one\nthree\ntwo\n', writes, true)).toEqual(['stdin line 2 arrived after line 3']);
    expect(checkEcho('one\nthree\n', writes, true)).toEqual(['1 accepted stdin line(s) never arrived, the first: "two"']);
    expect(checkEcho('one\n', writes, false)).toEqual([]);
  });
});

describe("the nemesis's writers-by-epoch check", () => {
  const entry = (seq: number, writer?: string, epoch?: number): AuditedEntry => ({ seq, kind: 'o', writer, epoch });
  const audit = (...logs: AuditedEntry[][]): RedisAudit => ({
    processes: logs.map((entries, i) => ({ environmentId: 'env-1', processId: `p${i}`, meta: {}, entries })),
    owners: new Map(),
    error: undefined,
  });
  const verdictOf = (of: RedisAudit): Verdict => {
    const verdict: Verdict = { violations: [], notes: [] };
    checkWriters(of, verdict);
    return verdict;
  };

  it('says "not available" while the entries carry no writer', () => {
    expect(verdictOf(audit([entry(1), entry(2)]))).toEqual({ violations: [], notes: ['one-writer-per-epoch: not available (none of 2 stream entries carries w and p)'] });
  });

  it('passes one writer per epoch, epochs growing', () => {
    expect(verdictOf(audit([entry(1, 'r1', 10), entry(2, 'r2', 20)], [entry(1, 'r2', 20)])).violations).toEqual([]);
  });

  it('finds two writers at one epoch, across the processes of an environment, and an epoch going back', () => {
    expect(verdictOf(audit([entry(1, 'r1', 10)], [entry(1, 'r2', 10)])).violations.map((v) => v.detail)).toEqual(['environment env-1: epoch 10 written by r1 and r2']);
    expect(verdictOf(audit([entry(1, 'r2', 20), entry(2, 'r1', 10)])).violations.map((v) => v.detail)).toEqual([
      'p0: seq 2 written at epoch 10 after seq 1 at epoch 20 (a stale writer appended)',
    ]);
  });
});

describe('the nemesis checks: which faults justify a loss', () => {
  let index = 0;
  const fault = (kind: AppliedFault['kind'], start: number, end = start + 500, target = 'redis'): AppliedFault => {
    index += 1;
    return { planned: { index, kind, atMs: start, durationMs: end - start, environment: 0, replica: 0, cut: false, holdEnd: 'forward' }, kind, start, end, target };
  };

  it("a session record lost: Redis's data, then a replica, both before the loss; in any other order, or alone, not", () => {
    const empty = fault('redis-restart-empty', 1_000);
    const kill = fault('replica-kill', 2_000, 3_000, 'c#1');
    expect(new Justifications([empty, kill]).sessionLoss(5_000)).toEqual([empty, kill]);
    // The kill before the data loss: the owner's successor had the record when Redis lost it.
    expect(new Justifications([fault('replica-kill', 500, 900, 'c#1'), empty]).sessionLoss(5_000)).toBeUndefined();
    expect(new Justifications([empty]).sessionLoss(5_000)).toBeUndefined();
    expect(new Justifications([fault('replica-pause', 2_000, 3_000, 'c#1'), empty]).sessionLoss(5_000)).toBeUndefined();
    // Both after the process was seen lost: they did not cause it.
    expect(new Justifications([empty, kill]).sessionLoss(1_500)).toBeUndefined();
    // A crash with the AOF loses a second of writes: it counts; a restart with the data does not.
    const crash = fault('redis-crash-aof', 1_000);
    expect(new Justifications([crash, kill]).sessionLoss(5_000)).toEqual([crash, kill]);
    expect(new Justifications([fault('redis-restart-aof', 1_000), kill]).sessionLoss(5_000)).toBeUndefined();
  });
});
