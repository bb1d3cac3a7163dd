import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either';
import { DecodeError } from '../../src/errors';
import { Base64Bytes, isBase64 } from '../../src/wire/base64';
import { decodeWith } from '../../src/wire/decode';
import { base64ishString } from './arbitraries';

/** An independent statement of canonical standard base64, as a (slow) regular expression. */
const CANONICAL = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$/;

describe('isBase64', () => {
  it.each(['', 'Zg==', 'Zm8=', 'Zm9v', 'b3V0MQo=', 'aGVsbG8gd29ybGQK', '+/+/'])('accepts canonical base64 %j', (s) => {
    expect(isBase64(s)).toBe(true);
  });

  it.each([
    ['a missing padding', 'Zg'],
    ['a length that is not a multiple of 4', 'Zm9vY'],
    ['padding in the middle', 'Zg==Zg=='],
    ['three padding characters', 'Z==='],
    ['URL-safe characters', 'Pz8-_w=='],
    ['whitespace', 'Zm9v Zm9v'],
    ['a newline', 'Zm9v\nZm9v'],
    ['a character outside ASCII that Node would read as "A"', 'ŁŁŁŁ'],
    ['non-zero unused bits', 'Zh=='],
    ['an exclamation mark', '!!!!'],
    ['padding before the last symbol', 'Zm=v'],
    ['a Latin-1 character', 'Zm\u00e9v'],
    ['a URL-safe character in a padded group', 'Zm-='],
    ['four padding characters', '===='],
    ['non-zero unused bits with one padding character', 'Zm9=']
  ])('rejects %s', (_what, s) => {
    expect(isBase64(s)).toBe(false);
  });

  it('agrees with a regular expression for canonical base64 on any string (property)', () => {
    fc.assert(
      fc.property(base64ishString(), (s) => {
        expect(isBase64(s)).toBe(CANONICAL.test(s));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('Base64Bytes', () => {
  it('decodes a base64 string to its bytes', () => {
    expect(decodeWith(Base64Bytes)('b3V0MQo=')).toEqual(E.right(Buffer.from('out1\n')));
  });

  it('encodes bytes, including a view into a larger buffer, to base64', () => {
    const whole = Buffer.from('xxout1\nyy');
    expect(Base64Bytes.encode(new Uint8Array(whole.buffer, whole.byteOffset + 2, 5))).toBe('b3V0MQo=');
  });

  it.each<[string, unknown]>([
    ['a number', 5],
    ['null', null],
    ['bad base64', 'b3V0MQo'],
  ])('rejects %s with a DecodeError naming the codec', (_what, input) => {
    expect(decodeWith(Base64Bytes)(input)).toEqual(E.left(new DecodeError('Base64Bytes', [`Invalid value ${JSON.stringify(input)} supplied to : Base64Bytes`])));
  });

  it('round-trips any bytes (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const wire = Base64Bytes.encode(bytes);
        expect(isBase64(wire)).toBe(true);
        expect(decodeWith(Base64Bytes)(wire)).toEqual(E.right(Buffer.from(bytes)));
      }),
    );
  });

  it('round-trips any accepted string (property)', () => {
    fc.assert(
      fc.property(base64ishString(), (s) => {
        const decoded = decodeWith(Base64Bytes)(s);
        if (E.isRight(decoded)) expect(Base64Bytes.encode(decoded.right)).toBe(s);
      }),
    );
  });
});
