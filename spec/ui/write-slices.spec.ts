/**
 * The dashboard's write slices (src/ui/write-slices.ts, plain TypeScript: no DOM): output goes to xterm
 * in slices of at most WRITE_SLICE bytes, cut after a line feed when one is in the slice's second half,
 * and the slices together are the bytes, in order, nothing lost or doubled.
 */
import { WRITE_SLICE, sliceEnd, slices } from '../../src/ui/write-slices';

const joined = (parts: readonly Uint8Array[]): Uint8Array => {
  const all = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
};

describe('write slices', () => {
  it('cuts `seq` output after line feeds, each slice at most WRITE_SLICE bytes and at least half of it', () => {
    const bytes = new TextEncoder().encode(Array.from({ length: 20_000 }, (_v, i) => `${i + 1}\n`).join(''));
    const parts = [...slices(bytes)];
    expect(WRITE_SLICE).toBe(2048);
    expect(Buffer.from(joined(parts)).equals(Buffer.from(bytes))).toBe(true);
    expect(parts.every((part) => part.length <= WRITE_SLICE)).toBe(true);
    expect(parts.slice(0, -1).every((part) => part.length > WRITE_SLICE / 2 && part[part.length - 1] === 0x0a)).toBe(true);
  });

  it('cuts at WRITE_SLICE when no line feed is in the second half, and leaves a short chunk whole', () => {
    const long = new Uint8Array(5000).fill(0x78);
    long[100] = 0x0a;
    expect([...slices(long)].map((part) => part.length)).toEqual([2048, 2048, 904]);
    expect(sliceEnd(long, 0)).toBe(2048);
    const short = new Uint8Array(10).fill(0x0a);
    expect([...slices(short)]).toEqual([short]);
    expect([...slices(new Uint8Array(0))]).toEqual([]);
  });

  it('hands out views, not copies', () => {
    const bytes = new Uint8Array(4096 + 7);
    const parts = [...slices(bytes, 1024)];
    expect(parts.every((part) => part.buffer === bytes.buffer)).toBe(true);
    expect(parts.map((part) => part.byteOffset)).toEqual([0, 1024, 2048, 3072, 4096]);
  });
});
