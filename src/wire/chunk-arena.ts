/**
 * Where decoded base64 goes. `Buffer.from(s, 'base64')` allocates a separate ArrayBuffer for anything of
 * 4 KiB or more (Node pools only smaller buffers): for an 8 KiB `process/output` chunk that allocation,
 * made through the C++ API, costs more than the decoding itself. Chunks of {@link ARENA_MIN_BYTES} to
 * {@link ARENA_MAX_BYTES} are therefore decoded straight into a shared append-only arena, like Node's own
 * pool but larger, and handed out as `Buffer` views of it.
 *
 * Memory a view covers is never written again: the arena only moves forward, and a full arena is
 * dropped (not reused) for a fresh one, so every chunk handed out stays valid for as long as anyone holds
 * it. An arena's memory is freed by the GC once no view of it is left. Like Node's pool, one view held
 * keeps its whole arena alive ({@link ARENA_BYTES}, at most 16 chunks).
 */

import { Buffer } from 'node:buffer';

/** Size of one arena. */
export const ARENA_BYTES = 64 * 1024;
/** Smaller results come from Node's pool (`Buffer.poolSize >>> 1`), which is cheaper for them. */
export const ARENA_MIN_BYTES = 4096;
/** Larger results get their own allocation, so that one arena holds at least four. */
export const ARENA_MAX_BYTES = ARENA_BYTES / 4;

let arena: Buffer | undefined;
let used = ARENA_BYTES;

/**
 * Decodes base64 `s`, whose canonical decoded length is `expected`, and returns the bytes, or
 * `undefined` when fewer came out (characters outside the alphabet, an early `=`). A refused string
 * leaves no trace: the arena does not move for it. The caller checks everything else about `s`.
 */
export function decodeBase64Into(s: string, expected: number): Buffer | undefined {
  if (expected < ARENA_MIN_BYTES || expected > ARENA_MAX_BYTES) {
    const bytes = Buffer.from(s, 'base64');
    return bytes.length === expected ? bytes : undefined;
  }
  if (arena === undefined || ARENA_BYTES - used < expected) {
    arena = Buffer.allocUnsafeSlow(ARENA_BYTES);
    used = 0;
  }
  const written = arena.write(s, used, expected, 'base64');
  if (written !== expected) return undefined;
  const bytes = Buffer.from(arena.buffer, arena.byteOffset + used, expected);
  // Keep every view 8-byte aligned, as Node's pool does.
  used += (expected + 7) & ~7;
  return bytes;
}
