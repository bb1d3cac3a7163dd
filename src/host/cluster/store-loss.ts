/**
 * What a replica knows of the shared store losing its data (Redis restarted empty): until each owner has
 * had a renewal round to write back what it holds, an environment the store no longer names may be one
 * whose owner has not written it back yet, so the operator API answers a call for it 503 (retry), never
 * 404 (which a client takes as final). The store's boot marker (`ClusterState.bootId`) tells a loss this
 * replica's own round has not seen yet; the loss a replica found and noted in the store
 * (`ClusterState.noteLoss`) tells one that came before this replica started (its marker is the new one).
 */
import type { SchedulerLike } from 'rxjs';
import type { ClusterState } from '../../store/cluster-state';

/** One replica's view of the store's losses (see the module's doc). Holds no timer. */
export class StoreLoss {
  /** The boot marker of the store's data as this replica knows it (undefined before its first look). */
  private knownBoot: string | undefined;
  /** When this replica's round found the data lost last. */
  private lostAt: number | undefined;

  constructor(
    private readonly state: Pick<ClusterState, 'bootId' | 'noteLoss' | 'recentLoss'>,
    private readonly scheduler: SchedulerLike,
    /** How long after a loss its owners may still be writing back (a few renewal rounds: the lease). */ private readonly settleMs: number,
  ) {}

  /** Learns the store's boot marker as it is now (the replica's start), unless known already. Never rejects. */
  async look(): Promise<void> {
    const boot = await this.state.bootId().catch(() => undefined);
    this.knownBoot ??= boot;
  }

  /**
   * Notes in the store that this replica's round found its data lost, for `settleMs` (before it writes
   * back: a replica started since learns of it). Rejects with the store's error (the round retries).
   */
  note(): Promise<void> {
    return this.state.noteLoss(this.settleMs);
  }

  /** This replica's round found the store's data lost (and wrote back what this replica owns); `boot` is the store's marker now. */
  found(boot: string): void {
    this.lostAt = this.scheduler.now();
    this.knownBoot = boot;
  }

  /**
   * Whether the store may not name an environment yet because it lost its data a moment ago: its boot
   * marker changed since this replica looked, this replica found a loss within `settleMs`, or another
   * replica noted one that has not run out. Rejects with the store's error when it does not answer.
   */
  async unsettled(): Promise<boolean> {
    const [boot, noted] = await Promise.all([this.state.bootId(), this.state.recentLoss()]);
    this.knownBoot ??= boot;
    if (boot !== this.knownBoot || noted) return true;
    return this.lostAt !== undefined && this.scheduler.now() - this.lostAt < this.settleMs;
  }
}
