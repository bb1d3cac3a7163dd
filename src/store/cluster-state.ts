/**
 * What a state store shared by several host replicas (the Redis adapter, `store/redis`) gives beyond the
 * {@link StateStore} port: one environment's registration read at an upgrade, the cluster's count of
 * environments, the owner's lease, the owners' rewrite after the store lost its data, and the count of
 * writes it refused as stale. The host's cluster mode (`HostServerOptions.cluster`) works through it.
 */
import type { PersistedRegistration, StateStore } from './state-store';

/** The extras of a shared state store (see the module's doc). Each read or write rejects with the store's error (its connection down). */
export interface ClusterState {
  /** Environment `id`'s latest registration, whichever replica recorded it; undefined when none is kept. */
  registration(id: string): Promise<PersistedRegistration | undefined>;
  /** How many environments the cluster knows (a registration or a session): what its limit counts. */
  environmentCount(): Promise<number>;
  /**
   * Renews `owner`'s lease on environment `id` for `ttlMs`, when the store still names `owner` the owner at
   * `epoch`: true; false when another owner or a newer epoch holds it (the caller is fenced). One step.
   */
  renewLease(id: string, owner: string, epoch: number, ttlMs: number): Promise<boolean>;
  /**
   * Writes `owner` at `epoch` as environment `id`'s owner unless the store holds a newer epoch for it (after
   * the store lost its data, each owner rewrites what it holds), with `signedAt`, the signing time of the
   * upgrade it claimed the environment on (see `ClaimOptions`), when known: true when written or already so.
   */
  restoreOwner(id: string, owner: string, epoch: number, signedAt?: number): Promise<boolean>;
  /** Whether the store lost its data since it was opened (or since the last call that said so): the owners then rewrite it. */
  datasetLost(): Promise<boolean>;
  /** Writes refused so far because their epoch was stale (the host's metrics read it). */
  readonly staleRefusals: number;
}

/** A state store shared by replicas: the port and its extras. */
export type SharedStateStore = StateStore & ClusterState;
