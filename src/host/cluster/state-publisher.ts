/**
 * A replica's publishing of the state of each environment it owns into the shared store, as it changes
 * (issue 38): the other replicas' lists, overviews and environment pages show the owner's real state
 * (starting, connected, disconnected, failed; its generation and error), where they showed `connected`,
 * generation 0, whatever it was. Each publish is checked against the store's owner and epoch (a fenced
 * replica never overwrites the new owner's) and renews the environment's lease (a sign of life).
 *
 * What changed is published one environment at a time, in order, on each change of the table and on each
 * renewal round (a claim shows in no change of the table: the round publishes it within `renewMs`); a
 * publish the store did not take (unreachable, or it lost its data and no owner is rewritten yet) is tried
 * again at the next round. A publish refused as stale fences the environment here.
 */
import type { Subscription } from 'rxjs';
import type { ClusterState, PublishedState } from '../../store/cluster-state';
import type { ClusterTable } from './cluster-options';

/** What the publisher works with. */
export interface PublisherParts {
  /** The shared state the states go to. */
  readonly state: ClusterState;
  /** The environments this replica serves (their current generations, and the epoch each claimed). */
  readonly table: ClusterTable;
  /** This replica as an owner. */
  readonly owner: string;
  /** The lease a publish renews. */
  readonly leaseMs: number;
  /** A publish was refused: another replica owns `id` now. */
  readonly fenced: (id: string, why: string) => void;
}

/** One replica's publisher (see the module's doc). Publishes from `start()` until `stop()`; its owner (`HostCluster`) stops it. Holds no timer. */
export class StatePublisher {
  /** What was published last of each environment (epoch and state, as text). */
  private readonly published = new Map<string, string>();
  private changes: Subscription | undefined;
  private publishing: Promise<void> = Promise.resolve();
  private queued = false;

  constructor(private readonly parts: PublisherParts) {}

  /** Publishes each change of the table from now on (the current states first). */
  start(): void {
    this.changes ??= this.parts.table.environments$.subscribe(() => void this.publishChanged());
  }

  /** Stops watching the table; resolves once a publish under way settled. Never rejects. */
  async stop(): Promise<void> {
    this.changes?.unsubscribe();
    this.changes = undefined;
    await this.publishing;
  }

  /** Forgets what was published (the store lost its data): the next round publishes every state again. */
  forget(): void {
    this.published.clear();
  }

  /**
   * Publishes what changed since the last publish (queued behind one under way: at most one more runs).
   * Resolves once done; never rejects (what the store did not take is tried again next time).
   */
  publishChanged(): Promise<void> {
    if (this.queued) return this.publishing;
    this.queued = true;
    this.publishing = this.publishing.then(() => {
      this.queued = false;
      return this.round();
    });
    return this.publishing;
  }

  private async round(): Promise<void> {
    const { table, state, owner, leaseMs } = this.parts;
    const views = table.all();
    const held = new Set(views.map((view) => view.id));
    for (const id of [...this.published.keys()]) if (!held.has(id)) this.published.delete(id);
    for (const view of views) {
      const epoch = table.epochOf(view.id);
      if (epoch === 0) continue;
      const said: PublishedState = { state: view.state, generation: view.generation, errorCode: view.errorCode, error: view.error };
      const text = JSON.stringify([epoch, said.state, said.generation, said.errorCode ?? null, said.error ?? null]);
      if (this.published.get(view.id) === text) continue;
      let outcome;
      try {
        outcome = await state.environmentStates.publish(view.id, owner, epoch, said, leaseMs);
      } catch {
        return; // the store does not answer: the next round tries again
      }
      if (outcome === 'written') this.published.set(view.id, text);
      else if (outcome === 'stale') this.parts.fenced(view.id, `its state at epoch ${epoch} was refused`);
    }
  }
}
