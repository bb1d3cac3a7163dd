import fc from 'fast-check';
import type { Observable, Subscription } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import type { CallOptions } from '../../src/rpc/rpc-connection';
import { RpcConnection } from '../../src/rpc/rpc-connection';
import type { MethodName, ParamsOf, ResultOf } from '../../src/wire/methods';
import { FakeSocketPort } from '../support/fake-socket-port';
import { errorIdentity, testScheduler } from '../support/marbles';
import { ReferenceCorrelator } from './reference-correlator';

// Virtual time: every scripted step happens at an even millisecond and every timeout is odd, so a
// deadline never falls on the same instant as a step (the two correlators schedule their timers
// differently, and a tie between a timer and a step would be ordered by scheduling, not by meaning).
const DEFAULT_TIMEOUT_MS = 41;
const METHODS = ['environment/status', 'process/terminate'] as const;
type Method = (typeof METHODS)[number];

type Step =
  | { readonly kind: 'call'; readonly method: Method; readonly timeoutMs: number | undefined; readonly signal: 'none' | 'own' | 'shared' }
  | { readonly kind: 'abort'; readonly call: number }
  | { readonly kind: 'abortShared' }
  | { readonly kind: 'reply'; readonly id: ReplyTarget; readonly result: unknown }
  | { readonly kind: 'error'; readonly id: ReplyTarget; readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } }
  | { readonly kind: 'noise'; readonly frame: unknown }
  | { readonly kind: 'close'; readonly by: 'peer' | 'client' };

/** The id a reply carries: a literal id, or the id of the call made `recent` calls ago (0: the latest). */
type ReplyTarget = number | string | { readonly recent: number };

/**
 * Mostly the id of a recent call, else ids of calls made earlier or not yet, and ids never sent (-1 is
 * the executor's unattributed-error id; 0, 99 and strings are never ours).
 */
const replyId = (): fc.Arbitrary<ReplyTarget> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.record({ recent: fc.nat({ max: 3 }) }) },
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 8 }) },
    { weight: 1, arbitrary: fc.constantFrom(-1, 0, 99, '1', 'x') },
  );

const step = (): fc.Arbitrary<Step> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('call' as const),
        method: fc.constantFrom(...METHODS),
        timeoutMs: fc.option(fc.integer({ min: 0, max: 30 }).map((n) => 2 * n + 1), { nil: undefined }),
        signal: fc.constantFrom('none' as const, 'own' as const, 'shared' as const),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('abort' as const), call: fc.nat({ max: 5 }) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'abortShared' as const }) },
    {
      weight: 8,
      arbitrary: fc.record({
        kind: fc.constant('reply' as const),
        id: replyId(),
        // Good and bad results for both methods: a reply to the "wrong" method fails its codec.
        result: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom({ status: 'ready' }, { running: true }, { running: false }) },
          { weight: 1, arbitrary: fc.constantFrom({ running: 'yes' }, null, {}) },
        ),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('error' as const),
        id: replyId(),
        error: fc.constantFrom(
          { code: -32600, message: 'unknown process id p' },
          { code: -32004, message: 'No such file or directory (os error 2)' },
          { code: -32603, message: 'spawn failed', data: { kind: 'spawnNotFound' } },
          { code: -32603, message: 'internal' },
        ),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('noise' as const),
        frame: fc.constantFrom('{not json', [1], { method: 'fs/missingChanged', params: { watchId: 1 } }, { id: 5, method: 'bogus/ask' }, { id: 2 }),
      }),
    },
  );

/** A script: steps at even, non-decreasing times, with at most one close somewhere among them. */
const script = (): fc.Arbitrary<ReadonlyArray<{ readonly at: number; readonly step: Step }>> =>
  fc
    .tuple(
      fc.array(fc.tuple(fc.nat({ max: 5 }), step()), { minLength: 4, maxLength: 30, size: 'medium' }),
      fc.option(fc.tuple(fc.nat({ max: 40 }), fc.constantFrom('peer' as const, 'client' as const)), { nil: undefined, freq: 2 }),
    )
    .map(([steps, close]) => {
      const all: Array<[number, Step]> = [...steps];
      if (close !== undefined) all.splice(Math.min(close[0], all.length), 0, [0, { kind: 'close', by: close[1] }]);
      let at = 0;
      return all.map(([gap, s]) => {
        at += 2 * gap;
        return { at, step: s };
      });
    });

/** How one call settled: its value or its error identity, and the virtual time. */
type Outcome = { readonly at: number; readonly value: unknown } | { readonly at: number; readonly error: unknown };

type Correlator = (method: Method, options: CallOptions) => Observable<unknown>;

interface Side {
  readonly port: FakeSocketPort;
  readonly rpc: RpcConnection;
  readonly opened: Subscription;
  readonly outcomes: Array<Outcome | undefined>;
  readonly request: Correlator;
}

const side = (scheduler: TestScheduler, correlator: (rpc: RpcConnection) => Correlator): Side => {
  const port = new FakeSocketPort();
  const rpc = new RpcConnection(port, { scheduler, requestTimeoutMs: DEFAULT_TIMEOUT_MS });
  return { port, rpc, opened: rpc.open(), outcomes: [], request: correlator(rpc) };
};

type Requester = <M extends MethodName>(method: M, params: ParamsOf<M>, options: CallOptions) => Observable<ResultOf<M>>;

/** A scripted call through `request`, with the params its method takes. */
const scripted =
  (request: Requester): Correlator =>
  (method, options) =>
    method === 'process/terminate' ? request(method, { processId: 'p' }, options) : request(method, undefined, options);

/** Runs `steps` against both sides in virtual time, feeding them the same events at the same instants. */
function play(steps: ReadonlyArray<{ readonly at: number; readonly step: Step }>): { readonly actual: Side; readonly reference: Side; readonly calls: number; readonly pendingAfter: number } {
  const scheduler = testScheduler();
  let calls = 0;
  let sides: readonly Side[] = [];
  scheduler.run(() => {
    const actual = side(scheduler, (rpc) => scripted((method, params, options) => rpc.request(method, params, options)));
    const reference = side(scheduler, (rpc) => {
      const correlator = new ReferenceCorrelator(rpc, scheduler, DEFAULT_TIMEOUT_MS);
      return scripted((method, params, options) => correlator.request(method, params, options));
    });
    sides = [actual, reference];
    // One AbortController per call and side (an abort reaches both sides at the same instant), plus one shared.
    const controllers: AbortController[][] = [];
    const shared = [new AbortController(), new AbortController()];
    const idOf = (target: ReplyTarget): number | string => (typeof target === 'object' ? Math.max(1, calls - target.recent) : target);
    const apply = (s: Step): void => {
      switch (s.kind) {
        case 'call': {
          const n = calls++;
          const own = sides.map(() => new AbortController());
          controllers.push(own);
          sides.forEach((x, i) => {
            const signal = s.signal === 'none' ? undefined : s.signal === 'own' ? own[i]?.signal : shared[i]?.signal;
            const record = (outcome: Outcome): void => {
              if (x.outcomes[n] !== undefined) throw new Error(`call ${n} settled twice`);
              x.outcomes[n] = outcome;
            };
            const options: CallOptions = { ...(s.timeoutMs === undefined ? {} : { timeoutMs: s.timeoutMs }), ...(signal === undefined ? {} : { signal }) };
            x.request(s.method, options).subscribe({
              next: (value) => record({ at: scheduler.now(), value }),
              error: (error: unknown) => record({ at: scheduler.now(), error: errorIdentity(error) }),
            });
          });
          return;
        }
        case 'abort':
          return controllers[s.call]?.forEach((c) => c.abort());
        case 'abortShared':
          return shared.forEach((c) => c.abort());
        case 'reply':
          return sides.forEach((x) => x.port.deliver({ id: idOf(s.id), result: s.result }));
        case 'error':
          return sides.forEach((x) => x.port.deliver({ id: idOf(s.id), error: s.error }));
        case 'noise':
          return sides.forEach((x) => x.port.deliver(s.frame));
        case 'close':
          return sides.forEach((x) => (s.by === 'peer' ? x.port.drop('peer vanished') : x.opened.unsubscribe()));
      }
    };
    for (const { at, step: s } of steps) scheduler.schedule(() => apply(s), at);
  });
  const [actual, reference] = sides;
  if (actual === undefined || reference === undefined) throw new Error('the scheduler did not run');
  // Every call has a deadline, so once virtual time has run out nothing may still be pending.
  const pendingAfter = actual.rpc.pendingCount;
  for (const x of sides) x.opened.unsubscribe();
  return { actual, reference, calls, pendingAfter };
}

describe('RpcConnection.request against the reference filter/take correlator', () => {
  it('settles every call the same way, at the same virtual time, for any interleaving of calls and peer events', () => {
    fc.assert(
      fc.property(script(), (steps) => {
        const { actual, reference, calls, pendingAfter } = play(steps);
        const settled = (x: Side): Array<Outcome | undefined> => Array.from({ length: calls }, (_, n) => x.outcomes[n]);
        expect(settled(actual).filter((o) => o === undefined)).toEqual([]);
        expect(settled(actual)).toEqual(settled(reference));
        expect(actual.port.sent).toEqual(reference.port.sent);
        expect(pendingAfter).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
