import * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either';
import { DecodeError } from '../../src/errors';
import { decodeWith } from '../../src/wire/decode';
import { Present, withDefault, withoutKeys } from '../../src/wire/presence';
import { struct } from '../../src/wire/struct';

describe('Present', () => {
  const Reply = t.type({ result: Present }, 'Reply');

  it('accepts null but not a missing key (t.unknown would accept both)', () => {
    expect(decodeWith(Reply)({ result: null })).toEqual(E.right({ result: null }));
    expect(decodeWith(Reply)({})).toEqual(E.left(new DecodeError('Reply', ['Invalid value undefined supplied to : Reply/result: Present'])));
    expect(E.isRight(decodeWith(t.type({ result: t.unknown }))({}))).toBe(true);
  });
});

describe('withoutKeys', () => {
  const OnlyA = withoutKeys('OnlyA', ['b'], t.type({ a: t.number }));

  it('rejects an object carrying a refused key, under that key', () => {
    expect(decodeWith(OnlyA)({ a: 1, b: 2 })).toEqual(E.left(new DecodeError('OnlyA', ['Invalid value 2 supplied to : OnlyA/b: Absent'])));
  });

  it('otherwise decodes with the wrapped codec', () => {
    expect(decodeWith(OnlyA)({ a: 1 })).toEqual(E.right({ a: 1 }));
    expect(OnlyA.is({ a: 1, b: 2 })).toBe(false);
  });
});

describe('withDefault', () => {
  const Flag = t.type({ on: withDefault(t.boolean, () => false) }, 'Flag');

  it('fills a missing key and keeps a present one', () => {
    expect([decodeWith(Flag)({}), decodeWith(Flag)({ on: true })]).toEqual([E.right({ on: false }), E.right({ on: true })]);
  });

  it('still rejects a present value of the wrong type', () => {
    expect(E.isLeft(decodeWith(Flag)({ on: 'yes' }))).toBe(true);
  });
});

describe('struct', () => {
  const Item = struct('Item', { id: t.string }, { note: t.string });

  it('drops unknown keys on decode and on encode', () => {
    expect(decodeWith(Item)({ id: 'a', note: 'n', extra: 1 })).toEqual(E.right({ id: 'a', note: 'n' }));
    expect(Item.encode(Object.assign({ id: 'a' }, { extra: 1 }))).toEqual({ id: 'a' });
  });

  it('names both halves in error paths', () => {
    expect(decodeWith(Item)({ note: 5 })).toEqual(
      E.left(
        new DecodeError('Item', ['Invalid value undefined supplied to : Item/0: Item (required)/id: string', 'Invalid value 5 supplied to : Item/1: Item (optional)/note: string']),
      ),
    );
  });
});
