/**
 * How a host replica takes part in a cluster of replicas sharing one state store (`ClusterOptions`), its
 * defaults, and what the metrics read of it (`ClusterFigures`). The replica's part itself is `./host-cluster`.
 */
import type { SchedulerLike } from 'rxjs';
import type { SharedStateStore } from '../../store/cluster-state';
import type { PersistedRegistration } from '../../store/state-store';
import type { HostLogger } from '../host-logger';
import type { HostedEnvironments } from '../hosted-environments';
import type { ReplicaKeys } from '../api/replica-keys';

/** How a replica takes part in a cluster (see `HostServerOptions.cluster`). */
export interface ClusterOptions {
  /** The state every replica shares (the Redis adapter): the host's `state` in cluster mode. */
  readonly state: SharedStateStore;
  /**
   * The cluster's id: the instance header of every operator API answer, the same on every replica, so a
   * client moving between replicas does not read it as a host restart. This replica's own id goes in
   * `X-Exec-Rx-Replica`.
   */
  readonly id: string;
  /** How long an owner's lease lasts unrenewed. @default 15000 */
  readonly leaseMs?: number;
  /** How often an owner renews its leases and checks that the store kept its data. @default 3000 */
  readonly renewMs?: number;
  /** How long a draining replica reports not ready (the balancer's checks see it) before it lets its executors go. @default 3000 */
  readonly drainDelayMs?: number;
  /**
   * When the shared store lost its data: writes back what the shared log knows of the logs this replica
   * writes for the environments it still owns (`owned`: each with its epoch), and no other (one it let go
   * of is the new owner's to write back). Resolves with how many. @default none
   */
  readonly rewriteLogs?: RewriteStep;
  /**
   * Forwarding of owner-only calls (issue 39, `../api/forwarding`): a call for an environment another
   * replica owns is forwarded to it, signed with the replica key; this replica advertises where it takes
   * forwarded calls. @default none: such a call gets 503 `ENVIRONMENT_ELSEWHERE`, and a signed forward 401
   */
  readonly forwarding?: ForwardingOptions;
}

/** How a replica forwards owner-only calls and takes them (see {@link ClusterOptions.forwarding}). */
export interface ForwardingOptions {
  /** The replica keys (`--replica-key-file`): the first signs, each is accepted; reloaded in place (SIGHUP). */
  readonly keys: ReplicaKeys;
  /**
   * The url other replicas reach this one at (`--internal-url`), advertised in the shared store with its
   * leases. @default its own url: `http(s)://<bound address>:<port>`, or, bound to every address, the
   * first non-internal IPv4 address of the machine
   */
  readonly internalUrl?: string;
  /** The CA certificates (PEM) an owner's `https` internal url is checked against (`--internal-ca`). @default the system's */
  readonly ca?: Buffer;
}

/**
 * A part of what a replica writes back once the shared store lost its data: it gets the environments the
 * replica still owns (each with its epoch, the one to write at), and resolves with how many records it
 * wrote; it rejects with the store's error (the next renewal round writes everything back again).
 */
export type RewriteStep = (owned: ReadonlyMap<string, number>) => Promise<number>;

/** The defaults of {@link ClusterOptions}. */
export const CLUSTER_DEFAULTS = {
  /** An owner's lease, unrenewed: 15 s. */
  leaseMs: 15_000,
  /** The renewal period: 3 s. */
  renewMs: 3_000,
  /** A draining replica's wait for the balancer: 3 s. */
  drainDelayMs: 3_000,
} as const;

/** What the metrics read of a replica. */
export interface ClusterFigures {
  /** State writes the shared store refused as stale (a fenced replica's). */
  readonly staleStateWrites: number;
  /** Log appends and log state changes refused as stale. */
  readonly staleLogWrites: number;
  /** Environments this replica let go of because another owns them now. */
  readonly fenced: number;
  /** Times the store was found to have lost its data (and this replica rewrote what it owns). */
  readonly rewrites: number;
}

/**
 * What of the host's environments (`HostedEnvironments`) a replica's cluster part reads and fences: their
 * states and changes, the epoch each claimed, its session and upgrade's signing time (written back after a
 * loss), and the fence itself.
 */
export type ClusterTable = Pick<HostedEnvironments, 'environments$' | 'all' | 'epochOf' | 'liveIds' | 'fence' | 'signedAtOf' | 'sessionOf'>;

/** What a replica's cluster part (`./host-cluster`) works with. */
export interface ClusterParts {
  readonly table: ClusterTable;
  readonly owner: string;
  readonly log: HostLogger;
  readonly scheduler: SchedulerLike;
  /** The registrations this replica issued or took, latest per environment (rewritten after a loss). */
  readonly registrations: () => readonly PersistedRegistration[];
  /** The access key id of each environment's latest accepted upgrade (its session's). */
  readonly keyIdOf: (id: string) => string | undefined;
}
