/**
 * A growable FIFO ring: O(1) `push`, `shift` and indexed `at`, no `Array.prototype.shift` copying.
 * Capacity doubles (powers of two) when full and never shrinks until `clear()`.
 *
 * @category Internals
 */
export class RingDeque<T> {
  private slots: (T | undefined)[];
  private head = 0;
  private size = 0;
  private mask: number;

  /** `initialCapacity` is rounded up to a power of two (at least 2). */
  constructor(private readonly initialCapacity = 8) {
    const capacity = powerOfTwoAtLeast(initialCapacity);
    this.slots = new Array<T | undefined>(capacity);
    this.mask = capacity - 1;
  }

  /** Number of values held. */
  get length(): number {
    return this.size;
  }

  /** Appends `value` at the back. */
  push(value: T): void {
    if (this.size > this.mask) this.grow();
    this.slots[(this.head + this.size) & this.mask] = value;
    this.size += 1;
  }

  /** Removes and returns the front value (`undefined` when empty). The slot is cleared for the GC. */
  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const value = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.size -= 1;
    return value;
  }

  /** The front value without removing it (`undefined` when empty). */
  peek(): T | undefined {
    return this.size === 0 ? undefined : this.slots[this.head];
  }

  /** The value `index` places behind the front (`undefined` when out of range). */
  at(index: number): T | undefined {
    if (index < 0 || index >= this.size) return undefined;
    return this.slots[(this.head + index) & this.mask];
  }

  /** The back value without removing it (`undefined` when empty). */
  peekLast(): T | undefined {
    return this.size === 0 ? undefined : this.slots[(this.head + this.size - 1) & this.mask];
  }

  /** Replaces the back value (ignored when empty). */
  setLast(value: T): void {
    if (this.size > 0) this.slots[(this.head + this.size - 1) & this.mask] = value;
  }

  /** Drops every value and returns to the initial capacity. */
  clear(): void {
    const capacity = powerOfTwoAtLeast(this.initialCapacity);
    this.slots = new Array<T | undefined>(capacity);
    this.mask = capacity - 1;
    this.head = 0;
    this.size = 0;
  }

  private grow(): void {
    const capacity = (this.mask + 1) * 2;
    const slots = new Array<T | undefined>(capacity);
    for (let i = 0; i < this.size; i += 1) slots[i] = this.slots[(this.head + i) & this.mask];
    this.slots = slots;
    this.mask = capacity - 1;
    this.head = 0;
  }
}

function powerOfTwoAtLeast(n: number): number {
  let capacity = 2;
  while (capacity < n) capacity *= 2;
  return capacity;
}
