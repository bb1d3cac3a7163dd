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
