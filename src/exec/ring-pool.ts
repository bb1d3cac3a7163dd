/**
 * Byte rings of released histories, kept for the next ones. A history at its bound holds one ring of
 * its byte bound (1 MiB by default). A host that runs process after process would otherwise allocate
 * and free one such block per process; glibc serves those from its heap once its mmap threshold has
 * risen (after the first free) and gives them back to the system only in part, so resident memory
 * creeps up. Only rings of at least {@link RING_POOL_MIN_BYTES} are kept, {@link RING_POOL_MAX_BYTES}
 * in all. A ring's old bytes are never read: a log reads only what it wrote (see `./retained-log`).
 */
import { Buffer } from 'node:buffer';

/** Smaller rings are not kept (they come from Node's pool or cost little). */
export const RING_POOL_MIN_BYTES = 256 * 1024;
/** The most the pool keeps, all rings together (resident: these rings were written). */
export const RING_POOL_MAX_BYTES = 8 * 1024 * 1024;

const rings = new Map<number, Uint8Array[]>();
let pooled = 0;

/** A ring of exactly `capacity` bytes: a kept one when there is one, else a new allocation. */
export function takeRing(capacity: number): Uint8Array {
  const ring = rings.get(capacity)?.pop();
  if (ring === undefined) return Buffer.allocUnsafe(capacity);
  pooled -= capacity;
  return ring;
}

/** Keeps `ring` (which its log no longer uses) for a later {@link takeRing}, within the pool's bounds. */
export function giveRing(ring: Uint8Array): void {
  const capacity = ring.byteLength;
  if (capacity < RING_POOL_MIN_BYTES || ring.byteOffset !== 0 || pooled + capacity > RING_POOL_MAX_BYTES) return;
  const list = rings.get(capacity);
  if (list === undefined) rings.set(capacity, [ring]);
  else list.push(ring);
  pooled += capacity;
}

/** Bytes the pool holds now. */
export function pooledRingBytes(): number {
  return pooled;
}

/**
 * Rings this small are read byte by byte (see {@link readRing}). A ring of at most this size made with
 * `new Uint8Array` keeps its bytes on V8's heap (its limit for typed arrays, 64 bytes), not in a slice of
 * Node's 8 KiB pool: a small ring kept for long (a finished process's, `RetainedLog.compact`) would pin a
 * share of a slab whose other slices (the frames and chunks of the moment) are gone: ~160 bytes for each
 * `echo hello` kept by its caller (issue 40). A view of it (`subarray`, `.buffer`) would move its bytes off
 * the heap, so no code takes one.
 */
export const ON_HEAP_RING_BYTES = 64;

/** Copies `length` bytes starting at `from` (wrapping) out of `ring` into the start of `into`. */
export function readRing(ring: Uint8Array, from: number, length: number, into: Uint8Array): void {
  const size = ring.byteLength;
  if (size <= ON_HEAP_RING_BYTES || into.byteLength <= ON_HEAP_RING_BYTES) {
    for (let i = 0, at = from; i < length; i += 1, at = at + 1 === size ? 0 : at + 1) into[i] = ring[at] ?? 0;
    return;
  }
  const first = Math.min(length, size - from);
  into.set(ring.subarray(from, from + first), 0);
  if (first < length) into.set(ring.subarray(0, length - first), first);
}
