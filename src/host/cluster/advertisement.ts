/**
 * Where a replica takes forwarded calls (issue 39, `../api/forwarding`): its internal url, said in the
 * shared store for a lease's time at its start and at each renewal round, so that a replica that stopped
 * or lost the store is no longer named once its lease ran out.
 */
import type { ClusterState } from '../../store/cluster-state';

/** One replica's advertisement (see the module's doc). Holds no timer: the renewal round drives it. */
export class Advertisement {
  private url: string | undefined;

  constructor(
    private readonly state: ClusterState,
    /** This replica's owner id. */ private readonly owner: string,
    /** How long one advertisement lasts: the lease. */ private readonly ttlMs: number,
  ) {}

  /** From now on advertises `url` (undefined: nothing, a replica that takes no forwarded calls). */
  start(url: string | undefined): void {
    this.url = url;
  }

  /** The url advertised, once started. */
  get internalUrl(): string | undefined {
    return this.url;
  }

  /** Says the url in the store for another lease. Never rejects: the renewal round says when the store does not answer. */
  async renew(): Promise<void> {
    if (this.url === undefined) return;
    try {
      await this.state.replicas.advertise(this.owner, this.url, this.ttlMs);
    } catch {
      // The next round advertises again.
    }
  }
}
