/**
 * The pool of released byte rings: a history's ring goes back when the history is released, the next
 * history of that bound takes it instead of a new allocation, within the pool's bounds; and a log that
 * takes a ring someone else wrote gives back only its own bytes.
 */
import { RetainedLog } from '../../src/exec/retained-log';
import { giveRing, pooledRingBytes, RING_POOL_MAX_BYTES, RING_POOL_MIN_BYTES, takeRing } from '../../src/exec/ring-pool';
import type { OutputEvent } from '../../src/wire/process-event';
import { outputBytes } from './event-builders';

const MiB = 1024 * 1024;

/** Empties the pool of rings of `capacity` (module state shared by this file's specs). */
const drain = (capacity: number): void => {
  while (pooledRingBytes() > 0) {
    const before = pooledRingBytes();
    takeRing(capacity);
    if (pooledRingBytes() === before) return;
  }
};

describe('ring pool', () => {
  beforeEach(() => drain(MiB));

  it('hands a given ring back for the same capacity, once; other capacities get a new one', () => {
    const ring = takeRing(MiB);
    expect(ring.byteLength).toBe(MiB);
    giveRing(ring);
    expect(pooledRingBytes()).toBe(MiB);
    expect(takeRing(2 * MiB)).not.toBe(ring);
    expect(takeRing(MiB)).toBe(ring);
    expect(pooledRingBytes()).toBe(0);
    expect(takeRing(MiB)).not.toBe(ring);
  });

  it('keeps no ring under its minimum size, nor a view into a larger buffer, nor more than its maximum in all', () => {
    giveRing(new Uint8Array(RING_POOL_MIN_BYTES - 1));
    giveRing(new Uint8Array(2 * MiB).subarray(MiB));
    expect(pooledRingBytes()).toBe(0);
    const rings = Array.from({ length: RING_POOL_MAX_BYTES / MiB + 3 }, () => takeRing(MiB));
    for (const ring of rings) giveRing(ring);
    expect(pooledRingBytes()).toBe(RING_POOL_MAX_BYTES);
  });

  it('a history released at its bound gives its ring to the next history, which gives back exactly its own bytes', () => {
    const fill = (log: RetainedLog, byte: number, count: number): void => {
      for (let seq = 1; seq <= count; seq += 1) {
        const event = outputBytes(seq, Buffer.alloc(16 * 1024, byte));
        if (log.length * 16 * 1024 + 16 * 1024 > MiB) log.rotate(event, MiB);
        else log.push(event);
      }
    };
    const first = new RetainedLog(MiB);
    fill(first, 0xaa, 100);
    expect(first.payloadBytes).toBe(MiB);
    first.clear();
    expect(pooledRingBytes()).toBe(MiB);
    const second = new RetainedLog(MiB);
    fill(second, 0x55, 70);
    // The second log grew to its bound by taking the first one's ring.
    expect(pooledRingBytes()).toBe(0);
    const bytes = Array.from({ length: second.length }, (_, i) => (second.at(i) as OutputEvent).chunk);
    expect(bytes.every((chunk) => chunk.byteLength === 16 * 1024 && chunk.every((b) => b === 0x55))).toBe(true);
    expect(second.payloadBytes).toBe(MiB);
  });
});
