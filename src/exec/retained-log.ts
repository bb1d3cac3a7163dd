import { Buffer } from 'node:buffer';
import type { OutputStream, SequencedEvent } from '../wire/process-event';
import { giveRing, ON_HEAP_RING_BYTES, readRing, takeRing } from './ring-pool';

const STREAMS: readonly OutputStream[] = ['stdout', 'stderr', 'pty'];
/** Smallest byte ring (Node's pool serves it). */
const MIN_CAPACITY = 64;
/** A ring this small is kept even when most of it is unused. */
const KEEP_CAPACITY = 4096;
/** Past this capacity a ring grows straight to the byte bound it was given. */
const GROW_DIRECT_ABOVE = 64 * 1024;
/** Outputs this large are kept as events, not as numbers (see `push`). */
const MAX_SLOT_BYTES = 2 ** 28;
/** An `exited` event whose exit code is outside [0, this) is kept as the event. */
const MAX_EXIT_CODE = 2 ** 27;
/** The slot of a `closed` event (no output slot ends in 0b110: an output's stream is 0, 1 or 2). */
const CLOSED_SLOT = 6;
/** An `exited` event's slot is `exitCode * 16 + sandboxDenied * 8 + EXITED_TAG`. */
const EXITED_TAG = 7;

/**
 * The retained events of one history, oldest first, with contiguous seqs. It keeps no object per output
 * event: each one is a small integer (its byte length, stream and class) in a ring of slots, and its bytes
 * are copied into one byte ring that is reused and never handed out. So a history at its bound holds a
 * few objects whatever it retains, instead of three per chunk that the young generation would copy on
 * every scavenge (and grow for).
 *
 * {@link at} gives an event back: an output is made again, with its own copy of the bytes (of the class
 * the original chunk had: `Buffer` or `Uint8Array`), on every call. The log does not keep what it made:
 * keeping it would hold the bytes twice (once in the ring, once in the copy) for as long as the event is
 * retained, so a single late subscriber would double what a history costs. `exited` and `closed` are
 * small integers too (a finished process kept by its owner holds no event object), made again by
 * {@link at} with the same fields.
 */
export class RetainedLog {
  /** `maxBytes`: the history's byte bound, which the retained bytes never exceed (unbounded by default). */
  constructor(private readonly maxBytes = Number.POSITIVE_INFINITY) {}

  /** Slots: `byteLength * 8 + stream * 2 + isBuffer` (output), `exitCode * 16 + sandboxDenied * 8 + 7` (exited), 6 (closed), or the event (see above). */
  private slots: (number | SequencedEvent)[] = EMPTY_SLOTS;
  private head = 0;
  private count = 0;
  private firstSeqValue = 0;
  /** Ring of output bytes: `bytesUsed` bytes from `bytesHead`, in slot order. */
  private bytes: Uint8Array | undefined;
  /** `bytes.byteLength` (0 without a ring). */
  private capacity = 0;
  private bytesHead = 0;
  private bytesUsed = 0;
  /** Where the last {@link at} found its bytes: slot `scanIndex` starts `scanOffset` bytes after `bytesHead`. */
  private scanIndex = 0;
  private scanOffset = 0;

  /** Retained events. */
  get length(): number {
    return this.count;
  }

  /** Retained output payload bytes. */
  get payloadBytes(): number {
    return this.bytesUsed;
  }

  /** The seq of the oldest retained event (`undefined` when empty). */
  get firstSeq(): number | undefined {
    return this.count === 0 ? undefined : this.firstSeqValue;
  }

  /** Appends `event`, whose seq follows the last one's. */
  push(event: SequencedEvent): void {
    const count = this.count;
    if (count === this.slots.length) this.growSlots();
    if (count === 0) this.firstSeqValue = event.seq;
    const slot = this.slotOf(event, event.type === 'output' ? event.chunk.byteLength : 0);
    this.slots[(this.head + count) & (this.slots.length - 1)] = slot;
    this.count = count + 1;
  }

  /**
   * Drops the oldest event and appends `event` in one step, when the result holds at most `maxBytes`
   * payload bytes: returns the dropped payload bytes; otherwise changes nothing and returns -1.
   */
  rotate(event: SequencedEvent, maxBytes: number): number {
    const count = this.count;
    if (count === 0) return -1;
    const slots = this.slots;
    const head = this.head;
    const oldest = slots[head] ?? 0;
    const freed = slotBytes(oldest);
    const length = event.type === 'output' ? event.chunk.byteLength : 0;
    if (this.bytesUsed - freed + length > maxBytes) return -1;
    // Only the common case: the ring of slots is exactly full, so the new slot takes the oldest's place.
    if (count !== slots.length) {
      this.shift();
      this.push(event);
      return freed;
    }
    if (this.scanIndex > 0) {
      this.scanIndex -= 1;
      this.scanOffset -= freed;
    }
    if (freed > 0) {
      let next = this.bytesHead + freed;
      if (next >= this.capacity) next -= this.capacity;
      this.bytesUsed -= freed;
      this.bytesHead = next;
    }
    this.firstSeqValue += 1;
    this.head = (head + 1) & (slots.length - 1);
    slots[head] = this.slotOf(event, length);
    return freed;
  }

  /** The slot of `event` (whose payload is `length` bytes), its bytes copied in. */
  private slotOf(event: SequencedEvent, length: number): number | SequencedEvent {
    if (event.type === 'closed') return CLOSED_SLOT;
    if (event.type === 'exited') {
      const code = event.exitCode;
      return Number.isInteger(code) && code >= 0 && code < MAX_EXIT_CODE ? code * 16 + (event.sandboxDenied ? 8 : 0) + EXITED_TAG : event;
    }
    const chunk = event.chunk;
    if (length > 0) this.copyIn(chunk, length);
    // Past 2^28 bytes the number would not stay a small integer: keep the event itself then.
    if (length >= MAX_SLOT_BYTES) return event;
    const stream = event.stream;
    return length * 8 + (stream === 'stdout' ? 0 : stream === 'stderr' ? 2 : 4) + (chunk instanceof Buffer ? 1 : 0);
  }

  /** Drops the oldest event; returns its payload bytes (0 when empty or not an output). */
  shift(): number {
    const count = this.count;
    if (count === 0) return 0;
    const slots = this.slots;
    const head = this.head;
    const slot = slots[head] ?? 0;
    slots[head] = 0;
    this.head = (head + 1) & (slots.length - 1);
    this.count = count - 1;
    this.firstSeqValue += 1;
    const length = slotBytes(slot);
    if (this.scanIndex > 0) {
      this.scanIndex -= 1;
      this.scanOffset -= length;
    }
    if (length > 0) {
      const used = this.bytesUsed - length;
      let next = this.bytesHead + length;
      if (next >= this.capacity) next -= this.capacity;
      this.bytesUsed = used;
      this.bytesHead = next;
      // Give memory back once most of it is unused (a history the budget emptied, a burst that passed).
      if (used * 8 < this.capacity && this.capacity > KEEP_CAPACITY) this.shrink();
    }
    return length;
  }

  /**
   * The event `index` places behind the oldest (`undefined` when out of range): an output is made again,
   * a new object with its own copy of the bytes on every call, and not kept.
   */
  at(index: number): SequencedEvent | undefined {
    if (index < 0 || index >= this.count) return undefined;
    const slot = this.slots[(this.head + index) & (this.slots.length - 1)];
    if (typeof slot !== 'number') return slot;
    const seq = this.firstSeqValue + index;
    if ((slot & 6) === 6) return slot === CLOSED_SLOT ? { type: 'closed', seq } : { type: 'exited', seq, exitCode: slot >>> 4, sandboxDenied: (slot & 8) !== 0 };
    return { type: 'output', seq, stream: STREAMS[(slot & 7) >> 1] ?? 'stdout', chunk: this.copyOut(index, slot) };
  }

  /** The history ended: bytes that fit {@link ON_HEAP_RING_BYTES} move to an exact ring on V8's heap, pinning no slab of Node's pool. */
  compact(): void {
    const ring = this.bytes;
    const used = this.bytesUsed;
    if (ring === undefined || used > ON_HEAP_RING_BYTES) return;
    const exact = used === 0 ? undefined : new Uint8Array(used);
    if (exact !== undefined) readRing(ring, this.bytesHead, used, exact);
    giveRing(ring);
    this.bytes = exact;
    this.capacity = used;
    this.bytesHead = 0;
  }

  /** Drops everything (the byte ring too). */
  clear(): void {
    this.slots = EMPTY_SLOTS;
    this.head = 0;
    this.count = 0;
    if (this.bytes !== undefined) giveRing(this.bytes);
    this.bytes = undefined;
    this.capacity = 0;
    this.bytesHead = 0;
    this.bytesUsed = 0;
    this.scanIndex = 0;
    this.scanOffset = 0;
  }

  private growSlots(): void {
    const old = this.slots;
    const slots = new Array<number | SequencedEvent>(Math.max(4, old.length * 2)).fill(0);
    for (let i = 0; i < this.count; i += 1) slots[i] = old[(this.head + i) & (old.length - 1)] ?? 0;
    this.slots = slots;
    this.head = 0;
  }

  /** Copies `chunk` in after the retained bytes: one `set` unless the free space wraps or is short. */
  private copyIn(chunk: Uint8Array, length: number): void {
    const head = this.bytesHead;
    const capacity = this.capacity;
    let at = head + this.bytesUsed;
    if (at >= capacity) at -= capacity;
    const ring = this.bytes;
    // A full ring has its write position at its head: the free space must be checked as a whole too.
    if (ring !== undefined && length <= capacity - this.bytesUsed && length <= (at >= head ? capacity - at : head - at)) {
      ring.set(chunk, at);
      this.bytesUsed += length;
    } else this.copyInWrapping(chunk, length);
  }

  private copyInWrapping(chunk: Uint8Array, length: number): void {
    if (this.bytes === undefined || this.capacity - this.bytesUsed < length) this.resize(this.grownCapacity(this.bytesUsed + length));
    const ring = this.bytes;
    if (ring === undefined) return;
    let at = this.bytesHead + this.bytesUsed;
    if (at >= this.capacity) at -= this.capacity;
    const first = this.capacity - at;
    if (length <= first) ring.set(chunk, at);
    else {
      ring.set(chunk.subarray(0, first), at);
      ring.set(chunk.subarray(first), 0);
    }
    this.bytesUsed += length;
  }

  /**
   * Doubling while small; past {@link GROW_DIRECT_ABOVE}, straight to the history's byte bound: a stream
   * at its bound then makes one big ring instead of five ever larger ones that linger until a full GC.
   * Untouched pages of a big ring cost no resident memory.
   */
  private grownCapacity(needed: number): number {
    const doubled = Math.max(MIN_CAPACITY, powerOfTwoAtLeast(needed));
    return doubled > GROW_DIRECT_ABOVE && this.maxBytes >= needed ? Math.max(doubled, this.maxBytes) : doubled;
  }

  private shrink(): void {
    if (this.bytesUsed === 0) {
      if (this.bytes !== undefined) giveRing(this.bytes);
      this.bytes = undefined;
      this.capacity = 0;
      this.bytesHead = 0;
    } else this.resize(Math.max(MIN_CAPACITY, powerOfTwoAtLeast(this.bytesUsed * 2)));
  }

  /** Moves the retained bytes, in order, to a ring of `capacity` bytes. */
  private resize(capacity: number): void {
    const next = takeRing(capacity);
    const ring = this.bytes;
    if (ring !== undefined && this.bytesUsed > 0) readRing(ring, this.bytesHead, this.bytesUsed, next);
    if (ring !== undefined) giveRing(ring);
    this.bytes = next;
    this.capacity = capacity;
    this.bytesHead = 0;
  }

  /** The bytes of the output at `index` (its slot is `slot`), copied out of the ring. */
  private copyOut(index: number, slot: number): Uint8Array {
    const length = slotBytes(slot);
    const copy = (slot & 1) === 1 ? Buffer.allocUnsafe(length) : new Uint8Array(length);
    const ring = this.bytes;
    if (length === 0 || ring === undefined) return copy;
    // Replays walk forward: continue from the last position found, so a whole replay is linear.
    if (index < this.scanIndex) {
      this.scanIndex = 0;
      this.scanOffset = 0;
    }
    for (; this.scanIndex < index; this.scanIndex += 1) this.scanOffset += slotBytes(this.slots[(this.head + this.scanIndex) & (this.slots.length - 1)]);
    readRing(ring, (this.bytesHead + this.scanOffset) % ring.byteLength, length, copy);
    return copy;
  }

}

/** Shared by every empty log; never written (a push first makes a real ring). */
const EMPTY_SLOTS: (number | SequencedEvent)[] = [];

/** Payload bytes of a slot. */
function slotBytes(slot: number | SequencedEvent | undefined): number {
  if (slot === undefined) return 0;
  if (typeof slot === 'number') return (slot & 6) === 6 ? 0 : slot >>> 3;
  return slot.type === 'output' ? slot.chunk.byteLength : 0;
}

function powerOfTwoAtLeast(n: number): number {
  let capacity = 1;
  while (capacity < n) capacity *= 2;
  return capacity;
}
