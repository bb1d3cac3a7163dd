import { RingDeque } from './ring-deque';

/** What a history lets the budget do to it. */
export interface BudgetMember {
  /** Absolute index of its oldest retained event (= events it ever evicted). */
  firstIndex(): number;
  /** Drops its oldest retained event; it reports the drop through its lease's `evicted`. */
  evictOldest(): void;
}

/** A history's registration with a {@link HistoryBudget}. Each method is O(1) amortised. */
export interface BudgetLease {
  /**
   * Records the event appended at absolute `index` with `bytes` payload bytes (after the member applied
   * its own bounds), then evicts until the shared total is within budget again.
   */
  appended(index: number, bytes: number): void;
  /** Records that the member dropped its oldest event (for any reason). */
  evicted(bytes: number): void;
  /** {@link evicted} (`freed` bytes) and {@link appended} in one step: the member rotated its oldest out. */
  rotated(freed: number, index: number, bytes: number): void;
  /** The process closed or failed: its history is now evicted first. */
  terminated(): void;
  /** Unregisters; the member's retained bytes no longer count. Idempotent. */
  release(): void;
}

const LIVE = 0;
const TERMINATED = 1;
const RELEASED = 2;

class Lease implements BudgetLease {
  state = LIVE;
  events = 0;
  bytes = 0;

  constructor(
    readonly member: BudgetMember,
    private readonly budget: HistoryBudget,
  ) {}

  appended(index: number, bytes: number): void {
    if (this.state === RELEASED) return;
    this.events += 1;
    this.bytes += bytes;
    this.budget.recordAppend(this, index, bytes);
    this.budget.enforce();
  }

  evicted(bytes: number): void {
    if (this.state === RELEASED) return;
    this.events -= 1;
    this.bytes -= bytes;
    this.budget.recordEvict(this, bytes);
  }

  rotated(freed: number, index: number, bytes: number): void {
    if (this.state === RELEASED) return;
    this.bytes += bytes - freed;
    this.budget.recordRotate(this, freed, index, bytes);
  }

  terminated(): void {
    if (this.state !== LIVE) return;
    this.budget.recordTerminate(this);
    this.state = TERMINATED;
  }

  release(): void {
    if (this.state === RELEASED) return;
    this.budget.recordRelease(this);
    this.state = RELEASED;
  }
}

/**
 * A byte budget shared by the replay histories of many processes (one per environment manager).
 * When the total retained bytes exceed `maxBytes` it evicts, oldest first:
 * 1. from the histories of processes that already closed or failed, in the order they ended
 *    (the first to end is emptied first);
 * 2. then the globally oldest events of running processes (a FIFO of append positions, checked lazily).
 *
 * Every operation is O(1) amortised: consecutive appends of one history share one FIFO entry (its last
 * index; while a single process streams, the FIFO holds one entry that each append moves forward), stale
 * entries are skipped when met and compacted away once they outnumber the live ones. The list of ended
 * histories is compacted the same way, so that released ones do not pile up in it (a manager that
 * runs processes for days holds only the ended histories that are still retained). The budget holds no
 * timers and no subscriptions; a history registers itself on construction and unregisters in `release()`.
 */
export class HistoryBudget {
  private total = 0;
  private liveEvents = 0;
  private members = 0;
  /** Ended histories not yet released: the entries of `ended` that may still matter. */
  private terminatedMembers = 0;
  /** Ended histories that may still hold events, in the order they ended. */
  private readonly ended = new RingDeque<Lease>();
  /** Append order of live histories' events: `owners[i]` appended a run of events ending at its event number `indexes[i]`. */
  private readonly owners = new RingDeque<Lease>();
  private readonly indexes = new RingDeque<number>();

  /** @param maxBytes total payload bytes all registered histories may retain together. */
  constructor(readonly maxBytes: number) {}

  /** Payload bytes retained by all registered histories. */
  get totalBytes(): number {
    return this.total;
  }

  /** Entries in the append-order FIFO, stale ones included (bookkeeping: stays O(live events)). */
  get trackedEntries(): number {
    return this.owners.length;
  }

  /** Entries in the list of ended histories, released ones not yet dropped included (bookkeeping). */
  get endedEntries(): number {
    return this.ended.length;
  }

  /** Registered histories. */
  get memberCount(): number {
    return this.members;
  }

  /** Registers a history; keep the lease and report through it. */
  register(member: BudgetMember): BudgetLease {
    this.members += 1;
    return new Lease(member, this);
  }

  /** @internal */
  recordAppend(lease: Lease, index: number, bytes: number): void {
    this.total += bytes;
    if (lease.state !== LIVE) return;
    this.liveEvents += 1;
    if (this.owners.peekLast() === lease) this.indexes.setLast(index);
    else {
      this.owners.push(lease);
      this.indexes.push(index);
      // The FIFO only grows here: bound it here (by what is live).
      this.compactIfStale();
    }
  }

  /** @internal An eviction and an append of the same member: the live event count does not change. */
  recordRotate(lease: Lease, freed: number, index: number, bytes: number): void {
    this.total += bytes - freed;
    if (lease.state === LIVE) {
      if (this.owners.peekLast() === lease) this.indexes.setLast(index);
      else {
        this.owners.push(lease);
        this.indexes.push(index);
        this.compactIfStale();
      }
    }
    if (this.total > this.maxBytes) this.evictOverBudget();
  }

  /** @internal */
  recordEvict(lease: Lease, bytes: number): void {
    this.total -= bytes;
    if (lease.state === LIVE) this.liveEvents -= 1;
  }

  /** @internal */
  recordTerminate(lease: Lease): void {
    this.liveEvents -= lease.events;
    this.terminatedMembers += 1;
    this.ended.push(lease);
    if (this.ended.length > 2 * this.terminatedMembers + 64) this.compactEnded();
  }

  /** @internal */
  recordRelease(lease: Lease): void {
    if (lease.state === TERMINATED) this.terminatedMembers -= 1;
    this.total -= lease.bytes;
    if (lease.state === LIVE) this.liveEvents -= lease.events;
    this.members -= 1;
  }

  /** @internal Evicts until within budget (or nothing is left to evict). */
  enforce(): void {
    if (this.total > this.maxBytes) this.evictOverBudget();
  }

  private evictOverBudget(): void {
    while (this.total > this.maxBytes) {
      const victim = this.nextEndedVictim() ?? this.nextLiveVictim();
      if (victim === undefined) return;
      const before = victim.events;
      victim.member.evictOldest();
      if (victim.events === before) return; // a member that cannot evict must not spin this loop
    }
  }

  private nextEndedVictim(): Lease | undefined {
    for (let lease = this.ended.peek(); lease !== undefined; lease = this.ended.peek()) {
      if (lease.state === TERMINATED && lease.events > 0) return lease;
      this.ended.shift();
    }
    return undefined;
  }

  /** The owner of the oldest entry still holding an event; entries whose run is gone are dropped. */
  private nextLiveVictim(): Lease | undefined {
    for (let lease = this.owners.peek(); lease !== undefined; lease = this.owners.peek()) {
      if (isAlive(lease, this.indexes.peek() ?? -1)) return lease;
      this.owners.shift();
      this.indexes.shift();
    }
    return undefined;
  }

  /** Released histories stay in the ended list until met; drop them once they are the majority. */
  private compactEnded(): void {
    const ended = this.ended;
    for (let i = ended.length; i > 0; i -= 1) {
      const lease = ended.shift();
      if (lease !== undefined && lease.state === TERMINATED) ended.push(lease);
    }
  }

  /** Entries of evicted events stay in the FIFO until met; drop them once they are the majority. */
  private compactIfStale(): void {
    if (this.owners.length <= 2 * this.liveEvents + 64) return;
    const owners = this.owners;
    const indexes = this.indexes;
    const count = owners.length;
    for (let i = 0; i < count; i += 1) {
      const lease = owners.shift();
      const index = indexes.shift() ?? -1;
      if (lease !== undefined && isAlive(lease, index)) {
        owners.push(lease);
        indexes.push(index);
      }
    }
  }
}

function isAlive(lease: Lease, index: number): boolean {
  return lease.state === LIVE && index >= lease.member.firstIndex();
}
