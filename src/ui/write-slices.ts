/**
 * Output is handed to xterm in bounded slices. xterm parses each write whole, in one task, and yields to
 * the page (every 12 ms) only between writes. A host output event can carry hundreds of KiB, and xterm
 * 6.0.0 spends microseconds per line feed (its scrollbar is synced and its hide timer re-armed on every
 * scroll; tens of microseconds while the code is cold and the scrollback still grows), so one event of
 * `seq 1 300000` was one task of 150–300 ms. In slices of {@link WRITE_SLICE} bytes a task is xterm's 12 ms
 * plus one slice. Plain TypeScript, no DOM.
 */

const NEWLINE = 0x0a;

/** The most bytes handed to xterm in one write (2 KiB: measured in Chromium, larger first slices made tasks over 50 ms). */
export const WRITE_SLICE = 2 * 1024;

/**
 * Where the slice of `bytes` that starts at `from` ends: after its last line feed in the second half of
 * {@link WRITE_SLICE} bytes (whole lines render more calmly), else at {@link WRITE_SLICE}; at most the end.
 * xterm keeps its parser and UTF-8 state between writes, so a cut inside a sequence is harmless.
 */
export function sliceEnd(bytes: Uint8Array, from: number, slice = WRITE_SLICE): number {
  const end = from + slice;
  if (end >= bytes.length) return bytes.length;
  const newline = bytes.lastIndexOf(NEWLINE, end - 1);
  return newline >= from + slice / 2 ? newline + 1 : end;
}

/** The slices of `bytes` (views, no copies), in order. */
export function* slices(bytes: Uint8Array, slice = WRITE_SLICE): Generator<Uint8Array> {
  for (let from = 0; from < bytes.length; ) {
    const to = sliceEnd(bytes, from, slice);
    yield bytes.subarray(from, to);
    from = to;
  }
}
