import type { SchedulerLike, Subscription } from 'rxjs';

/** A deadline that has not fired; `cancel()` is O(1) amortised and idempotent. */
export interface Deadline {
  cancel(): void;
}

/**
 * What {@link Deadlines.armFor} arms: an object that carries its own deadline fields (so arming makes no
 * object) and whose `expire()` runs once the deadline passes. Leave the fields to the Deadlines.
 */
export interface DeadlineEntry {
  expire(): void;
  /** When it expires (on the Deadlines' clock). */
  deadlineAt: number;
  /** The queue it waits in while armed; `undefined` once cancelled or fired. */
  deadlineQueue: DeadlineQueue | undefined;
}

/** One FIFO of entries sharing a timeout value. */
export interface DeadlineQueue {
  readonly delayMs: number;
  readonly entries: DeadlineEntry[];
  head: number;
  action: Subscription | undefined;
}

/** Where deadlines read the time: the scheduler itself, or a clock that stands still while paused. */
export interface DeadlineClock {
  now(): number;
}

/**
 * Call timeouts without a timer per call: calls that share a timeout value expire in the order they
 * started, so each distinct value keeps a FIFO and one scheduled action for its head. Arming costs an
 * array push; cancelling releases the target and trims settled entries off the head, so a queue holds
 * only the calls started since its oldest pending one. The scheduler is injected (specs run in virtual
 * time) and sees one action per distinct timeout value at a time.
 *
 * Deadlines are measured on `clock` (the scheduler's time by default). {@link suspend} stops every
 * action and {@link resume} sets them again for what is left: with a clock that stands still in between
 * (the connection's `PauseClock`), no deadline counts the suspended time.
 */
export class Deadlines {
  private readonly queues = new Map<number, DeadlineQueue>();
  private suspended = false;

  constructor(
    private readonly scheduler: SchedulerLike,
    private readonly clock: DeadlineClock = scheduler,
  ) {}

  /** Calls `fire` once `delayMs` has passed, unless cancelled first. */
  arm(delayMs: number, fire: () => void): Deadline {
    const entry: DeadlineEntry = { expire: fire, deadlineAt: 0, deadlineQueue: undefined };
    this.armFor(delayMs, entry);
    return { cancel: () => this.cancel(entry) };
  }

  /** Calls `entry.expire()` once `delayMs` has passed, unless `cancel(entry)` comes first. Makes no object. */
  armFor(delayMs: number, entry: DeadlineEntry): void {
    let queue = this.queues.get(delayMs);
    if (queue === undefined) {
      queue = { delayMs, entries: [], head: 0, action: undefined };
      this.queues.set(delayMs, queue);
    }
    entry.deadlineAt = this.clock.now() + delayMs;
    entry.deadlineQueue = queue;
    queue.entries.push(entry);
    if (queue.action === undefined && !this.suspended) queue.action = this.schedule(delayMs, delayMs);
  }

  /** Stops every action (idempotent): nothing expires until {@link resume}. */
  suspend(): void {
    if (this.suspended) return;
    this.suspended = true;
    for (const queue of this.queues.values()) {
      queue.action?.unsubscribe();
      queue.action = undefined;
    }
  }

  /** Sets each queue's action again, for what is left of its head's deadline on the clock (idempotent). */
  resume(): void {
    if (!this.suspended) return;
    this.suspended = false;
    const now = this.clock.now();
    for (const queue of this.queues.values()) {
      const head = queue.entries[queue.head];
      if (head !== undefined && queue.action === undefined) queue.action = this.schedule(queue.delayMs, head.deadlineAt - now);
    }
  }

  /** Cancels `entry` (idempotent; nothing for an entry never armed). */
  cancel(entry: DeadlineEntry): void {
    const queue = entry.deadlineQueue;
    if (queue === undefined) return;
    entry.deadlineQueue = undefined;
    this.trim(queue);
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
  private trim(queue: DeadlineQueue): void {
    const { entries } = queue;
    while (queue.head < entries.length && entries[queue.head]?.deadlineQueue === undefined) queue.head += 1;
    if (queue.head === entries.length) {
      queue.action?.unsubscribe();
      if (this.queues.get(queue.delayMs) === queue) this.queues.delete(queue.delayMs);
      return;
    }
    if (queue.head > 1024 && queue.head * 2 > entries.length) {
      entries.splice(0, queue.head);
      queue.head = 0;
    }
  }

  private expire(delayMs: number): void {
    const queue = this.queues.get(delayMs);
    if (queue === undefined || this.suspended) return;
    queue.action = undefined;
    const now = this.clock.now();
    for (let entry = queue.entries[queue.head]; entry !== undefined && entry.deadlineAt <= now; entry = queue.entries[queue.head]) {
      queue.head += 1;
      const armed = entry.deadlineQueue !== undefined;
      entry.deadlineQueue = undefined;
      if (armed) entry.expire();
    }
    this.trim(queue);
    const next = queue.entries[queue.head];
    if (this.queues.get(delayMs) === queue && next !== undefined && queue.action === undefined && !this.suspended) queue.action = this.schedule(delayMs, next.deadlineAt - now);
  }
}
