/**
 * The nemesis's seeded randomness: a small PRNG (mulberry32 over a splitmix32 of the seed) whose draws a
 * seed replays exactly, so a seed names one fault schedule (and one workload plan). Independent streams
 * of one seed ({@link Prng.fork}) keep the schedule the same when the workload draws more or less.
 */

/** A seeded source of numbers (see the module's doc). */
export class Prng {
  private state: number;

  constructor(seed: number) {
    // splitmix32 of the seed, so that neighbouring seeds start far apart.
    let z = (seed + 0x9e3779b9) | 0;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    this.state = (z ^ (z >>> 16)) >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max] (both included). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One of `items` (which must not be empty). */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }

  /** One of `items` by weight (`[item, weight]` pairs, weights > 0). */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((sum, [, weight]) => sum + weight, 0);
    let left = this.next() * total;
    for (const [item, weight] of items) {
      left -= weight;
      if (left < 0) return item;
    }
    const last = items[items.length - 1];
    if (last === undefined) throw new RangeError('weighted pick from an empty list');
    return last[0];
  }

  /** An independent stream of this seed, named by `label` (the same label gives the same stream). */
  fork(label: string): Prng {
    let hash = 0x811c9dc5;
    for (let i = 0; i < label.length; i++) hash = Math.imul(hash ^ label.charCodeAt(i), 0x01000193);
    return new Prng((this.state ^ hash) >>> 0);
  }
}
