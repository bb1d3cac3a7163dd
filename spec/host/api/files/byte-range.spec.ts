import { ifRangeHolds, noneMatchHits, rangeOf } from '../../../../src/host/api/files/byte-range';

describe('rangeOf', () => {
  it.each([
    [undefined, { kind: 'whole' }],
    ['bytes=0-9', { kind: 'part', start: 0, end: 10 }],
    ['bytes=10-', { kind: 'part', start: 10, end: 100 }],
    ['bytes=90-200', { kind: 'part', start: 90, end: 100 }],
    ['bytes=-5', { kind: 'part', start: 95, end: 100 }],
    ['bytes=-500', { kind: 'part', start: 0, end: 100 }],
    ['bytes=100-', { kind: 'unsatisfiable' }],
    ['bytes=100-200', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=abc', { kind: 'whole' }],
    ['lines=1-2', { kind: 'whole' }],
    ['bytes=5-1', { kind: 'whole' }],
    ['bytes=0-1,5-6', { kind: 'whole' }],
    ['bytes=-', { kind: 'whole' }],
  ])('reads %s of a 100-byte file', (header, expected) => {
    expect(rangeOf(header, 100)).toEqual(expected);
  });

  it('finds nothing to give of an empty file', () => {
    expect(rangeOf('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
  });
});

describe('ifRangeHolds', () => {
  const lastModified = 'Wed, 21 Oct 2015 07:28:00 GMT';
  it('holds without the header, and for exactly the Last-Modified date', () => {
    expect([ifRangeHolds(undefined, lastModified), ifRangeHolds(lastModified, lastModified), ifRangeHolds('Wed, 21 Oct 2015 07:27:59 GMT', lastModified)]).toEqual([true, true, false]);
  });
  it('never holds for an entity tag (weak tags are not strong validators) or a file without a date', () => {
    expect([ifRangeHolds('W/"1-2"', lastModified), ifRangeHolds('"x"', lastModified), ifRangeHolds(lastModified, undefined)]).toEqual([false, false, false]);
  });
});

describe('noneMatchHits', () => {
  it('compares weakly, in a list, and takes *', () => {
    expect([noneMatchHits('W/"1-2"', 'W/"1-2"'), noneMatchHits('"1-2"', 'W/"1-2"'), noneMatchHits('"a", W/"1-2"', 'W/"1-2"'), noneMatchHits('*', 'W/"1-2"'), noneMatchHits('W/"1-3"', 'W/"1-2"')]).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
  });
});
