/**
 * What a state store shared by several host replicas (the Redis adapter, `store/redis`) gives beyond the
 * {@link StateStore} port: one environment's registration read at an upgrade, the cluster's count of
 * environments, the owner's lease, the owners' rewrite after the store lost its data, the count of
 * writes it refused as stale, and what each owner says of its environments ({@link EnvironmentStates}:
 * their states for the other replicas' lists, and the eviction of one no replica serves). The host's
 * cluster mode (`HostServerOptions.cluster`) works through it.
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
  /** The store's boot marker (made when it has none): another one than before means it lost its data since. */
  bootId(): Promise<string>;
  /**
   * Notes in the store, for `forMs`, that this replica found its data lost: a replica started since (whose
   * boot marker is the new one) learns of the loss from {@link recentLoss}.
   */
  noteLoss(forMs: number): Promise<void>;
  /** Whether a replica noted a loss of the store's data (`noteLoss`) within the time it gave. */
  recentLoss(): Promise<boolean>;
  /** Where each replica takes forwarded calls (its internal url). */
  readonly replicas: ReplicaDirectory;
  /** Writes refused so far because their epoch was stale (the host's metrics read it). */
  readonly staleRefusals: number;
  /** What each owner says of the environments it owns, read by every replica; and the eviction of one no replica serves. */
  readonly environmentStates: EnvironmentStates;
}

/** Where each replica takes forwarded calls (issue 39): its internal url, for as long as it renews it. Each call rejects with the store's error. */
export interface ReplicaDirectory {
  /**
   * Says, for `ttlMs`, that replica `owner` takes forwarded calls at `url` (its internal url): renewed with
   * its leases, gone `ttlMs` after its last renewal (a replica that stopped or lost the store).
   */
  advertise(owner: string, url: string, ttlMs: number): Promise<void>;
  /** The internal url replica `owner` advertised ({@link advertise}), while its advertisement lasts; undefined otherwise. */
  url(owner: string): Promise<string | undefined>;
}

/** A state store shared by replicas: the port and its extras. */
export type SharedStateStore = StateStore & ClusterState;

/** The states an owner publishes of an environment: the host's `HostedState` (`starting`, then its connection's state). */
export type OwnerState = 'starting' | 'connecting' | 'connected' | 'disconnected' | 'failed' | 'closed';

/** An environment's state as its owner publishes it. */
export interface PublishedState {
  /** Where its current generation is. */
  readonly state: OwnerState;
  /** The owner's generation of it (1 for the first executor session the owner served under this id). */
  readonly generation: number;
  /** The library's code of the error that made it `disconnected` or `failed`, if any. */
  readonly errorCode: string | undefined;
  /** That error's message (a library error message: never a secret), if any. */
  readonly error: string | undefined;
}

/**
 * What a publish did: `written`; `unowned`, nothing written (the store holds no owner for the environment:
 * it lost its data, and the owners rewrite theirs first); `stale`, nothing written (another owner or a
 * newer epoch holds it: the caller is fenced).
 */
export type PublishOutcome = 'written' | 'unowned' | 'stale';

/** An environment some replica claimed, as the shared store says now. */
export interface OwnedEnvironment {
  /** The environment id. */
  readonly id: string;
  /** The replica that claimed it last. */
  readonly owner: string;
  /** The epoch of that claim. */
  readonly epoch: number;
  /**
   * Whether its owner serves it: the owner's lease at that epoch holds, or the owner claimed it lately and
   * has not yet had the time to renew it (the read's `graceMs`). False: its lease ran out, and what it
   * published last may no longer be so.
   */
  readonly served: boolean;
  /** What the owner published at that epoch; undefined while it published nothing since its claim. */
  readonly published: PublishedState | undefined;
}

/**
 * What each owner says of its environments, in the shared store (see the module's doc). Each call rejects
 * with the store's error (its connection down), or ClosedError once the store is closed.
 */
export interface EnvironmentStates {
  /**
   * Publishes environment `id`'s `state` as `owner` at `epoch`, and renews its lease for `ttlMs` (a
   * publish is a sign of life), in one step checked against the store's owner and epoch: resolves with
   * what it did ({@link PublishOutcome}); a fenced replica's publish never overwrites the new owner's.
   */
  publish(id: string, owner: string, epoch: number, state: PublishedState, ttlMs: number): Promise<PublishOutcome>;
  /**
   * Every environment a replica claimed (and no one forgot since), with its owner, whether it is served, and
   * what its owner published. A claim that has said nothing yet is given `graceMs` from the first read that
   * finds it to renew its lease or publish, before it counts as not served.
   */
  owned(graceMs: number): Promise<readonly OwnedEnvironment[]>;
  /**
   * Evicts one environment no replica serves, to make room under the cluster's limit: its registration is
   * older than `olderThanMs` (by the store's clock) and it has no owner, or its owner's lease ran out (a
   * claim that said nothing: `graceMs` after it was first found, as in {@link owned}). Its records go as
   * `StateStore.forget` drops them. Each candidate is checked and dropped in one step, so that of replicas
   * evicting at once, each environment goes to one of them: resolves with the id this call evicted, or
   * undefined when there was none.
   */
  evictUnserved(olderThanMs: number, graceMs: number): Promise<string | undefined>;
}
