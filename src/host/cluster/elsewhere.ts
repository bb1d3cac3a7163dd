/**
 * The environments other replicas own, as this replica's lists, overview and environment pages show them
 * (issue 38): the state their owner published (`ClusterState.environmentStates`), its generation and
 * error, while the owner serves them. One whose owner's lease ran out is `offline`: no replica vouches
 * for its state (the owner stopped, died, or lost Redis; its executor re-dials and another replica takes
 * it back, which then publishes anew), so a replica says it does not know rather than repeat a state that
 * may be long gone, and `offline` is what the API already says of an environment no replica serves. A
 * `failed` one stays `failed` (that generation ended; only a new claim changes it).
 */
import type { SchedulerLike } from 'rxjs';
import type { ClusterState, OwnedEnvironment, OwnerState } from '../../store/cluster-state';

/** How long one read of the environments other replicas own serves this replica's lists and overviews. */
export const ELSEWHERE_FRESH_MS = 1_000;

/** An environment another replica owns, as the API shows it. */
export interface ElsewhereEnvironment {
  /** The replica that owns it. */
  readonly owner: string;
  /** Its owner's state of it, or `offline` once the owner's lease ran out. */
  readonly state: OwnerState | 'offline';
  /** The owner's generation of it (0 while it published none, or once `offline`). */
  readonly generation: number;
  /** The error its owner published with a `disconnected` or `failed` state. */
  readonly error: { readonly code: string; readonly message: string } | undefined;
}

/** How `owned` shows (see the module's doc). */
export function elsewhereOf(owned: OwnedEnvironment): ElsewhereEnvironment {
  const { owner, published } = owned;
  if (!owned.served && published?.state !== 'failed') return { owner, state: 'offline', generation: 0, error: undefined };
  if (published === undefined) return { owner, state: 'starting', generation: 0, error: undefined };
  const { state, generation, errorCode, error } = published;
  const failure = errorCode === undefined && error === undefined ? undefined : { code: errorCode ?? 'HOST_ERROR', message: error ?? '' };
  return { owner, state, generation, error: failure };
}

/** The reads of what other replicas own, shared while fresh. Holds no timer: nothing to tear down. */
export class Elsewhere {
  private last: { readonly at: number; readonly read: Promise<ReadonlyMap<string, ElsewhereEnvironment>> } | undefined;

  constructor(
    private readonly state: ClusterState,
    /** This replica as an owner. */ private readonly owner: string,
    private readonly scheduler: SchedulerLike,
    /** How long a claim that said nothing yet is taken as starting (the lease). */ private readonly graceMs: number,
  ) {}

  /** The environments other replicas own now, by id. Read at most once per {@link ELSEWHERE_FRESH_MS}. Never rejects (empty when the store does not answer). */
  environments(): Promise<ReadonlyMap<string, ElsewhereEnvironment>> {
    const now = this.scheduler.now();
    if (this.last === undefined || now - this.last.at >= ELSEWHERE_FRESH_MS) this.last = { at: now, read: this.read() };
    return this.last.read;
  }

  private async read(): Promise<ReadonlyMap<string, ElsewhereEnvironment>> {
    try {
      const found = new Map<string, ElsewhereEnvironment>();
      for (const owned of await this.state.environmentStates.owned(this.graceMs)) if (owned.owner !== this.owner) found.set(owned.id, elsewhereOf(owned));
      return found;
    } catch {
      return new Map();
    }
  }
}
