import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { ARENA_BYTES, ARENA_MAX_BYTES, ARENA_MIN_BYTES, decodeBase64Into } from '../../src/wire/chunk-arena';
import { decodeCanonical } from '../../src/wire/base64';
import { base64ishString } from './arbitraries';

describe('decodeBase64Into (the chunk arena)', () => {
  it('gives the bytes Buffer.from gives, for every size around the arena bounds', () => {
    for (const size of [0, 1, ARENA_MIN_BYTES - 1, ARENA_MIN_BYTES, 8192, ARENA_MAX_BYTES, ARENA_MAX_BYTES + 1]) {
      const bytes = randomBytes(size);
      expect(decodeBase64Into(bytes.toString('base64'), size)).toEqual(bytes);
    }
  });

  it('never writes again over a chunk it handed out: every chunk keeps its bytes while many more are decoded', () => {
    const held = Array.from({ length: 40 }, () => {
      const bytes = randomBytes(8192);
      return { bytes, view: decodeBase64Into(bytes.toString('base64'), 8192) };
    });
    // More than one whole arena's worth after them, refused strings included.
    for (let i = 0; i < (4 * ARENA_BYTES) / 8192; i += 1) {
      decodeBase64Into(randomBytes(8192).toString('base64'), 8192);
      decodeBase64Into('!'.repeat(10924), 8193);
    }
    for (const { bytes, view } of held) expect(view).toEqual(bytes);
    // Views of one arena share its memory; a new arena starts when the last one is full (the first may
    // have been part-used already).
    const arenas = new Set(held.map(({ view }) => view?.buffer)).size;
    expect(arenas).toBeGreaterThanOrEqual(Math.ceil(40 / Math.floor(ARENA_BYTES / 8192)));
    expect(arenas).toBeLessThanOrEqual(Math.ceil(40 / Math.floor(ARENA_BYTES / 8192)) + 1);
  });

  it('refuses a string that decodes short, and takes no arena space for it', () => {
    const good = randomBytes(6000).toString('base64');
    const first = decodeBase64Into(good, 6000);
    expect(decodeBase64Into(`${good.slice(0, -4)}!!!!`, 6000)).toBeUndefined();
    const next = decodeBase64Into(good, 6000);
    expect(next?.byteOffset).toBe((first?.byteOffset ?? 0) + 6000);
  });

  it('decodeCanonical with ascii decides as without it, for any ASCII string (property)', () => {
    fc.assert(
      fc.property(base64ishString().filter((s) => /^[\x00-\x7f]*$/.test(s)), (s) => {
        expect(decodeCanonical(s, true)).toEqual(decodeCanonical(s));
      }),
      { numRuns: 3000 },
    );
  });

  it('decodeCanonical still refuses, with ascii, what Node would read past: a Latin-1 character in a one-byte string', () => {
    expect(decodeCanonical('Zm\u00e9v', true)).toBeUndefined();
    expect(decodeCanonical('Zm9v\ufffd', true)).toBeUndefined();
  });
});
