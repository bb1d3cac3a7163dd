import * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either';
import { DecodeError } from '../../src/errors';
import { decodeWith, parseJson } from '../../src/wire/decode';

describe('decodeWith', () => {
  const Point = t.type({ x: t.number, y: t.number }, 'Point');

  it('returns the decoded value', () => {
    expect(decodeWith(Point)({ x: 1, y: 2 })).toEqual(E.right({ x: 1, y: 2 }));
  });

  it('names the codec and every failing path', () => {
    expect(decodeWith(Point)({ x: '1' })).toEqual(
      E.left(new DecodeError('Point', ['Invalid value "1" supplied to : Point/x: number', 'Invalid value undefined supplied to : Point/y: number'])),
    );
  });

  it('raises a DecodeError with code DECODE_FAILED', () => {
    const result = decodeWith(Point)(null);
    expect(E.isLeft(result) && { code: result.left.code, name: result.left.name, what: result.left.what }).toEqual({
      code: 'DECODE_FAILED',
      name: 'DecodeError',
      what: 'Point',
    });
  });
});

describe('parseJson', () => {
  it('parses JSON text', () => {
    expect(parseJson('{"a":[1,null]}')).toEqual(E.right({ a: [1, null] }));
  });

  it('returns a DecodeError about JSON instead of throwing', () => {
    expect(parseJson('{not json')).toEqual(E.left(new DecodeError('JSON', ["Expected property name or '}' in JSON at position 1"])));
  });
});
