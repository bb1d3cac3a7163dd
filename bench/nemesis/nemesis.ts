/**
 * The nemesis: applies a schedule (`./schedule`) to a lab (`./lab`) in real time, each fault at its time
 * and bounded by its duration, overlapping as planned; then heals everything. A replica-level fault aims
 * at the owner of its environment (as Redis says when it applies), else at a replica no other fault holds.
 * It records what it did (the applied faults, with their real times and targets), the drained replicas'
 * exit statuses, and each replica's take-back metric scraped before the nemesis kills or drains it.
 */
import type { Lab } from './lab';
import type { FaultKind, PlannedFault, Schedule } from './schedule';
import { SCOPE } from './schedule';
import { orTimeout, sleep } from './time';

/** The metric of a take-back that left a process neither adopted nor lost (absent counts as 0). */
export const UNACCOUNTED_METRIC = 'exec_rx_host_take_back_unaccounted_total';
/** How long a drained replica may take to exit. */
const DRAIN_EXIT_MS = 40_000;

/** A fault as it happened. */
export interface AppliedFault {
  readonly planned: PlannedFault;
  readonly kind: FaultKind;
  /** When it started and ended (ms, `Date.now()`). */
  readonly start: number;
  end: number;
  /** What it acted on: a replica incarnation (`b#2`), `redis`, or an environment id. */
  readonly target: string;
  /** Why it was skipped, if it was. */
  skipped?: string;
  /** What went wrong applying it, if anything. */
  error?: string;
}

/** A drained replica's end. */
export interface DrainExit {
  readonly who: string;
  readonly code: number | null;
  readonly signal: string | null;
  /** Whether it exited within the bound (else it was killed). */
  readonly inTime: boolean;
  readonly ms: number;
}


/** Runs a schedule against a lab (see the module's doc). */
export class Nemesis {
  readonly applied: AppliedFault[] = [];
  readonly drains: DrainExit[] = [];
  /** The take-back metric of each incarnation (`b#2`) when last scraped, and whether the replica had it. */
  readonly unaccounted = new Map<string, { readonly value: number; readonly present: boolean }>();
  private readonly busy = new Set<string>();

  constructor(
    private readonly lab: Lab,
    private readonly schedule: Schedule,
    private readonly environments: readonly string[],
  ) {}

  /** Applies every fault at its time (from now); resolves once the last is over. */
  async run(): Promise<void> {
    const t0 = Date.now();
    await Promise.all(
      this.schedule.faults.map(async (fault) => {
        await sleep(Math.max(0, t0 + fault.atMs - Date.now()));
        await this.apply(fault);
      }),
    );
  }

  /** Every proxy passes, every replica runs (a stopped one continued, an ended one started again). */
  async healAll(): Promise<void> {
    for (const slot of this.lab.slots.values()) {
      slot.lb.heal();
      slot.lb.release();
      slot.redis.heal();
      slot.redis.release();
      const proc = this.lab.proc(slot.name);
      proc.signal('SIGCONT');
      if (proc.ended) await this.lab.startReplica(slot.name);
    }
  }

  /** Scrapes the take-back metric of every running incarnation. */
  async scrapeAll(): Promise<void> {
    await Promise.all([...this.lab.slots.keys()].map((name) => this.scrape(name)));
  }

  private async scrape(name: string): Promise<void> {
    const proc = this.lab.proc(name);
    if (proc.ended) return;
    const scraped = await proc.metric(UNACCOUNTED_METRIC);
    if (scraped !== undefined) this.unaccounted.set(proc.who, scraped);
  }

  private async apply(planned: PlannedFault): Promise<void> {
    const scope = SCOPE[planned.kind];
    const target = scope === 'redis' ? 'redis' : scope === 'executor' ? (this.environments[planned.environment] ?? '') : await this.aim(planned);
    const fault: AppliedFault = { planned, kind: planned.kind, start: Date.now(), end: Date.now(), target: target ?? '' };
    this.applied.push(fault);
    if (target === undefined) {
      fault.skipped = 'no replica free of other faults';
      return;
    }
    const name = target.split('#')[0] ?? '';
    try {
      await this.act(planned, name);
    } catch (error: unknown) {
      fault.error = error instanceof Error ? error.message : String(error);
    } finally {
      fault.end = Date.now();
      if (scope === 'replica') this.busy.delete(name);
    }
  }

  /** The replica a replica-level fault acts on (`name#incarnation`), marked busy; undefined when none is free within 15 s. */
  private async aim(planned: PlannedFault): Promise<string | undefined> {
    const names = [...this.lab.slots.keys()];
    const deadline = Date.now() + 15_000;
    for (;;) {
      const free = names.filter((name) => !this.busy.has(name) && !this.lab.proc(name).ended);
      if (this.busy.size < 2 && free.length > 0) {
        const owner = await this.lab.owner(this.environments[planned.environment] ?? '');
        const owning = owner === undefined ? undefined : this.lab.replicaOf(owner);
        const fallback = [...names.slice(planned.replica), ...names.slice(0, planned.replica)].find((name) => free.includes(name));
        const name = owning !== undefined && owning === this.lab.proc(owning.launch.name) && free.includes(owning.launch.name) ? owning.launch.name : fallback;
        if (name !== undefined) {
          this.busy.add(name);
          return this.lab.proc(name).who;
        }
      }
      if (Date.now() > deadline) return undefined;
      await sleep(250);
    }
  }

  private async act(planned: PlannedFault, name: string): Promise<void> {
    const { lab } = this;
    const ms = planned.durationMs;
    switch (planned.kind) {
      case 'replica-kill': {
        await this.scrape(name);
        const proc = lab.proc(name);
        proc.signal('SIGKILL');
        await proc.exited;
        await sleep(ms);
        await lab.startReplica(name);
        return;
      }
      case 'replica-pause': {
        const proc = lab.proc(name);
        proc.signal('SIGSTOP');
        if (planned.cut) lab.slot(name).lb.cut();
        await sleep(ms);
        proc.signal('SIGCONT');
        return;
      }
      case 'drain':
        return this.drain(name);
      case 'lb-cut':
      case 'redis-cut': {
        const proxy = planned.kind === 'lb-cut' ? lab.slot(name).lb : lab.slot(name).redis;
        if (ms > 0) proxy.refuse();
        proxy.cut();
        await sleep(ms);
        proxy.heal();
        return;
      }
      case 'lb-blackhole':
      case 'redis-blackhole': {
        const proxy = planned.kind === 'lb-blackhole' ? lab.slot(name).lb : lab.slot(name).redis;
        proxy.blackhole();
        await sleep(ms);
        proxy.heal();
        return;
      }
      case 'lb-hold': {
        const proxy = lab.slot(name).lb;
        proxy.hold(ms, planned.holdEnd);
        proxy.cut();
        await sleep(ms);
        proxy.heal();
        return;
      }
      case 'redis-restart-aof':
      case 'redis-crash-aof':
      case 'redis-restart-empty':
        await lab.redis?.restart({ crash: planned.kind === 'redis-crash-aof', empty: planned.kind === 'redis-restart-empty', downMs: ms });
        return;
      case 'executor-restart':
        await lab.executors?.restart(name, ms);
        return;
    }
  }

  /** SIGUSR2; waits for its exit (bounded; SIGKILL past it) and records it; starts a replacement on its data dir. */
  private async drain(name: string): Promise<void> {
    await this.scrape(name);
    const proc = this.lab.proc(name);
    const started = Date.now();
    proc.signal('SIGUSR2');
    let exit = await orTimeout(proc.exited, DRAIN_EXIT_MS);
    const inTime = exit !== undefined;
    if (exit === undefined) {
      proc.signal('SIGKILL');
      exit = await proc.exited;
    }
    this.drains.push({ who: proc.who, code: exit.code, signal: exit.signal, inTime, ms: Date.now() - started });
    await this.lab.startReplica(name);
  }
}
