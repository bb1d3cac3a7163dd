import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either';
import { decodeWith } from '../../src/wire/decode';
import { Integer, NonNegativeInteger } from '../../src/wire/integer';

describe('Integer', () => {
  it('accepts any integer, negative included, as a plain number (property)', () => {
    fc.assert(fc.property(fc.integer(), (n) => expect(decodeWith(Integer)(n)).toEqual(E.right(n))));
  });

  it.each<[string, unknown]>([
    ['a float', 1.5],
    ['a numeric string', '1'],
    ['null', null],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('rejects %s', (_what, value) => {
    expect(E.isLeft(decodeWith(Integer)(value))).toBe(true);
  });
});

describe('NonNegativeInteger', () => {
  it('accepts 0 and up, rejects negatives (property)', () => {
    fc.assert(fc.property(fc.integer(), (n) => expect(E.isRight(decodeWith(NonNegativeInteger)(n))).toBe(n >= 0)));
  });
});
