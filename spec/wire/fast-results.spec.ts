import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either';
import type * as t from 'io-ts';
import { DecodeError } from '../../src/errors';
import { decodeWith } from '../../src/wire/decode';
import { EnvironmentStatusResponse } from '../../src/wire/environment';
import { environmentStatusOf, execResponseOf, terminateResponseOf, writeResponseOf } from '../../src/wire/fast-results';
import { decodeResult, decodeResultOrError } from '../../src/wire/methods';
import { ExecResponse, TerminateResponse, WriteResponse } from '../../src/wire/process';

/** Values `JSON.parse` makes, biased towards the shape each result has (so both outcomes come often). */
const resultLike = (shape: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> => {
  const near = fc.record(shape, { requiredKeys: [] });
  const extra = fc.record({ other: fc.jsonValue({ maxDepth: 1 }), processId: fc.oneof(fc.string({ maxLength: 4 }), fc.integer()) }, { requiredKeys: [] });
  return fc
    .oneof({ weight: 5, arbitrary: fc.tuple(near, extra).map(([a, b]) => ({ ...b, ...a })) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) })
    .map((value) => JSON.parse(JSON.stringify(value)) as unknown);
};

const loose = (...values: unknown[]): fc.Arbitrary<unknown> => fc.oneof(fc.constantFrom(...values), fc.jsonValue({ maxDepth: 1 }));

const cases: ReadonlyArray<readonly [string, (u: unknown) => unknown, t.Mixed, fc.Arbitrary<unknown>]> = [
  ['environment/status', environmentStatusOf, EnvironmentStatusResponse, resultLike({ status: loose('ready', 'Ready', 'starting') })],
  ['process/write', writeResponseOf, WriteResponse, resultLike({ status: loose('accepted', 'unknownProcess', 'stdinClosed', 'starting', 'closed') })],
  ['process/terminate', terminateResponseOf, TerminateResponse, resultLike({ running: loose(true, false, 'true', 0) })],
  ['process/start', execResponseOf, ExecResponse, resultLike({ processId: loose('p1', ''), sandboxType: loose('none', 'linuxSeccomp', null, 3) })],
];

describe('fast result decoders', () => {
  it.each(cases)('%s: the hand-written decoder equals its codec on any JSON value (property)', (_method, fast, codec, values) => {
    let accepted = 0;
    fc.assert(
      fc.property(values, (value) => {
        const expected = decodeWith(codec)(value);
        if (E.isRight(expected)) accepted += 1;
        expect(fast(value)).toEqual(E.isRight(expected) ? expected.right : undefined);
      }),
      { numRuns: 1500 },
    );
    // Both outcomes must come often, or the property proves little.
    expect(accepted).toBeGreaterThan(100);
    expect(accepted).toBeLessThan(1400);
  });

  it('decodeResultOrError gives the decoded result, or the DecodeError decodeResult names', () => {
    expect(decodeResultOrError('environment/status', { status: 'ready', extra: 1 })).toEqual({ status: 'ready' });
    expect(decodeResultOrError('process/read', { chunks: [], nextSeq: 1, exited: false, exitCode: null, closed: false })).toEqual({ chunks: [], nextSeq: 1, exited: false, exitCode: null, closed: false, failure: null, sandboxDenied: false });
    const refused = decodeResultOrError('environment/status', { status: 'busy' });
    expect(refused).toBeInstanceOf(DecodeError);
    expect(E.left(refused)).toEqual(decodeResult('environment/status', { status: 'busy' }));
  });
});
