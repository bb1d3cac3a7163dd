import type { SchedulerLike, Subscription } from 'rxjs';

/** A deadline that has not fired; `cancel()` is O(1) amortised and idempotent. */
export interface Deadline {
  cancel(): void;
}

interface Entry {
  readonly at: number;
  fire: (() => void) | undefined;
}

interface Queue {
  readonly entries: Entry[];
  head: number;
  action: Subscription | undefined;
}

/**
 * Call timeouts without a timer per call: calls that share a timeout value expire in the order they
 * started, so each distinct value keeps a FIFO and one scheduled action for its head. Arming costs an
 * array push; cancelling releases the callback and trims settled entries off the head, so a queue holds
 * only the calls started since its oldest pending one. The scheduler is injected (specs run in virtual
 * time) and sees one action per distinct timeout value at a time.
 */
export class Deadlines {
  private readonly queues = new Map<number, Queue>();

  constructor(private readonly scheduler: SchedulerLike) {}

  /** Calls `fire` once `delayMs` has passed, unless cancelled first. */
  arm(delayMs: number, fire: () => void): Deadline {
    const entry: Entry = { at: this.scheduler.now() + delayMs, fire };
    let queue = this.queues.get(delayMs);
    if (queue === undefined) {
      queue = { entries: [], head: 0, action: undefined };
      this.queues.set(delayMs, queue);
    }
    queue.entries.push(entry);
    if (queue.action === undefined) queue.action = this.schedule(delayMs, delayMs);
    const owner = queue;
    return {
      cancel: () => {
        if (entry.fire === undefined) return;
        entry.fire = undefined;
        this.trim(delayMs, owner);
      },
    };
  }

  /** Number of armed, unfired entries still held (bookkeeping). */
  get size(): number {
    let held = 0;
    for (const queue of this.queues.values()) held += queue.entries.length - queue.head;
    return held;
  }

  /** Drops every deadline (the connection closed). */
  clear(): void {
    for (const queue of this.queues.values()) queue.action?.unsubscribe();
    this.queues.clear();
  }

  private schedule(delayMs: number, inMs: number): Subscription {
    return this.scheduler.schedule(() => this.expire(delayMs), Math.max(0, inMs));
  }

  /** Drops settled entries off the head; an emptied queue stops its action. */
  private trim(delayMs: number, queue: Queue): void {
    const { entries } = queue;
    while (queue.head < entries.length && entries[queue.head]?.fire === undefined) queue.head += 1;
    if (queue.head === entries.length) {
      queue.action?.unsubscribe();
      if (this.queues.get(delayMs) === queue) this.queues.delete(delayMs);
      return;
    }
    if (queue.head > 1024 && queue.head * 2 > entries.length) {
      entries.splice(0, queue.head);
      queue.head = 0;
    }
  }

  private expire(delayMs: number): void {
    const queue = this.queues.get(delayMs);
    if (queue === undefined) return;
    queue.action = undefined;
    const now = this.scheduler.now();
    for (let entry = queue.entries[queue.head]; entry !== undefined && entry.at <= now; entry = queue.entries[queue.head]) {
      queue.head += 1;
      const fire = entry.fire;
      entry.fire = undefined;
      fire?.();
    }
    this.trim(delayMs, queue);
    const next = queue.entries[queue.head];
    if (this.queues.get(delayMs) === queue && next !== undefined && queue.action === undefined) queue.action = this.schedule(delayMs, next.at - now);
  }
}
