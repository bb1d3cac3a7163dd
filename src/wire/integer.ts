import * as t from 'io-ts';

/**
 * A JSON number that is an integer (`1.5` is rejected, `1.0` parses to `1` and is accepted). The
 * decoded type is plain `number`: no brand for callers to deal with.
 */
export const Integer: t.Type<number, number, unknown> = new t.Type<number, number, unknown>(
  'Integer',
  (u): u is number => typeof u === 'number' && Number.isInteger(u),
  (u, c) => (typeof u === 'number' && Number.isInteger(u) ? t.success(u) : t.failure(u, c)),
  t.identity,
);

/** Whether `u` is an integer ≥ 0 (the protocol's `u64`/`usize`: seq, nextSeq, offset, len, size, ...). */
export const isNonNegativeInteger = (u: unknown): u is number => typeof u === 'number' && Number.isInteger(u) && u >= 0;

/** An integer ≥ 0: the protocol's `u64`/`usize` fields. The decoded type is plain `number`. */
export const NonNegativeInteger: t.Type<number, number, unknown> = new t.Type<number, number, unknown>(
  'NonNegativeInteger',
  isNonNegativeInteger,
  (u, c) => (isNonNegativeInteger(u) ? t.success(u) : t.failure(u, c)),
  t.identity,
);
