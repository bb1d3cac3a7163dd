/**
 * A host replica's part in a cluster of replicas sharing one state store (Redis): it renews the lease of
 * each environment it owns, publishes their states for the other replicas (`./state-publisher`) and reads
 * theirs (`./elsewhere`), fences itself out of one whose epoch moved on (another replica adopted it on
 * the executor's newer socket), rewrites what it owns after the store lost its data, says when its lease
 * is in doubt (then upgrades get 503, never 409 or 401), evicts an environment no replica serves when a
 * registration needs its place, and drains for a deploy: not ready first, then its executors' sockets let
 * go so that they re-dial another replica, which takes their sessions back.
 */
import type { Subscription } from 'rxjs';
import { timer } from 'rxjs';
import { messageOf, StaleEpochError } from '../../errors';
import type { PersistedRegistration } from '../../store/state-store';
import type { ClusterFigures, ClusterOptions, ClusterParts, RewriteStep } from './cluster-options';
import { CLUSTER_DEFAULTS } from './cluster-options';
import type { ElsewhereEnvironment } from './elsewhere';
import { Advertisement } from './advertisement';
import { Elsewhere } from './elsewhere';
import { StoreLoss } from './store-loss';
import { StatePublisher } from './state-publisher';

export type { ClusterParts } from './cluster-options';

/** One replica's part in the cluster (see the module's doc). */
export class HostCluster {
  private readonly leaseMs: number;
  private readonly renewMs: number;
  private readonly drainDelayMs: number;
  private renewing: Subscription | undefined;
  private lastRenewedAt: number;
  private unreachableSaid = false;
  private drainingSince: number | undefined;
  /** Ends a drain's wait for the balancer at once (the host stops). */
  private endDrainWait: (() => void) | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private counts = { staleLogWrites: 0, fenced: 0, rewrites: 0 };
  /** The reads of {@link environmentsElsewhere}, shared while fresh. */
  private readonly elsewhere: Elsewhere;
  /** When the store lost its data: what a call for an environment it does not name answers meanwhile. */
  private readonly loss: StoreLoss;
  /** Publishes the state of each environment this replica owns. */
  private readonly publisher: StatePublisher;
  /** Where this replica takes forwarded calls, said in the store (with forwarding). */
  private readonly advertisement: Advertisement;
  /** Renewals and publishes refused (another owner or a newer epoch; either may be a paused replica's first write): stale writes the store does not count. */
  private refusedHere = 0;
  /** The store lost its data and this replica has not written everything back yet (a round failed midway). */
  private rewritePending = false;
  /** What the rest of the host writes back after a loss, besides environments, registrations and logs. */
  private readonly rewriteSteps: RewriteStep[] = [];

  constructor(
    readonly options: ClusterOptions,
    private readonly parts: ClusterParts,
  ) {
    this.leaseMs = options.leaseMs ?? CLUSTER_DEFAULTS.leaseMs;
    this.renewMs = options.renewMs ?? CLUSTER_DEFAULTS.renewMs;
    this.drainDelayMs = options.drainDelayMs ?? CLUSTER_DEFAULTS.drainDelayMs;
    this.lastRenewedAt = parts.scheduler.now();
    this.elsewhere = new Elsewhere(options.state, parts.owner, parts.scheduler, this.leaseMs);
    this.loss = new StoreLoss(options.state, parts.scheduler, this.leaseMs);
    this.advertisement = new Advertisement(options.state, parts.owner, this.leaseMs);
    const fenced = (id: string, why: string): void => void (this.refusedHere++, this.fence(id, why));
    this.publisher = new StatePublisher({ state: options.state, table: parts.table, owner: parts.owner, leaseMs: this.leaseMs, fenced });
  }

  /** The cluster's id (see {@link ClusterOptions.id}). */
  get id(): string {
    return this.options.id;
  }

  /**
   * Learns the store's boot marker, starts publishing its environments' states and renewing leases every `renewMs` on the host's
   * clock, until {@link stop}; with forwarding, advertises `forwarding.internalUrl` (else `ownUrl`) at once and at each renewal.
   */
  start(ownUrl?: string): void {
    const forwarding = this.options.forwarding;
    this.advertisement.start(forwarding === undefined ? undefined : (forwarding.internalUrl ?? ownUrl));
    this.publisher.start();
    this.ticking = this.ticking.then(() => this.loss.look()).then(() => this.advertisement.renew());
    this.renewing ??= timer(this.renewMs, this.renewMs, this.parts.scheduler).subscribe(() => {
      this.ticking = this.ticking.then(() => this.tick());
    });
  }

  /** Stops renewing and publishing (a stop or a drain), and ends a drain's wait; resolves once a renewal under way settled. Never rejects. */
  async stop(): Promise<void> {
    this.renewing?.unsubscribe();
    this.renewing = undefined;
    this.endDrainWait?.();
    await this.ticking;
    await this.publisher.stop();
  }

  /**
   * Why upgrades get 503 now (the executor retries them, where a 409 or 401 would make it re-register or
   * exit), or undefined: draining, or the lease not renewed for longer than it lasts (the store unreachable).
   */
  refusal(): string | undefined {
    if (this.drainingSince !== undefined) return 'the replica is draining';
    if (this.parts.scheduler.now() - this.lastRenewedAt > this.leaseMs) return 'its lease is in doubt (the shared store does not answer)';
    return undefined;
  }

  /** Whether the replica was told to drain. */
  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  /** What the metrics read. */
  figures(): ClusterFigures {
    return { staleStateWrites: this.options.state.staleRefusals + this.refusedHere, ...this.counts };
  }

  /**
   * Whether environment `id` is owned at `epoch` by this replica in the store now; false when another
   * replica (or a newer epoch) owns it. Rejects when the store does not answer.
   */
  async ownsNow(id: string, epoch: number): Promise<boolean> {
    const owner = await this.options.state.owner(id);
    return owner === undefined || (owner.owner === this.parts.owner && owner.epoch === epoch);
  }

  /**
   * The replica that owns `id` now when it is not this one (the operator API answers 503 for it). Rejects
   * with the store's error (StoreUnavailableError) when it does not answer: which replica serves `id` is not known then.
   */
  async ownerElsewhere(id: string): Promise<string | undefined> {
    const owner = await this.options.state.owner(id);
    return owner === undefined || owner.owner === this.parts.owner ? undefined : owner.owner;
  }

  /** The internal url replica `owner` advertises now (where its environments' calls are forwarded). Rejects when the store does not answer. */
  replicaUrl(owner: string): Promise<string | undefined> {
    return this.options.state.replicas.url(owner);
  }

  /** Whether the store may not name an environment yet because it lost its data a moment ago (see `StoreLoss`). Rejects when it does not answer. */
  unsettled(): Promise<boolean> {
    return this.loss.unsettled();
  }

  /**
   * The environments other replicas own now, each with its owner and the state its owner published (see
   * `./elsewhere`: `offline` once the owner's lease ran out). Read at most once a second: every list and
   * every overview stream of this replica asks. Never rejects (empty when the store does not answer).
   */
  environmentsElsewhere(): Promise<ReadonlyMap<string, ElsewhereEnvironment>> {
    return this.elsewhere.environments();
  }

  /** Environment `id`'s latest registration, whichever replica recorded it (the registrations' admission reads it). Rejects when the store does not answer. */
  registration(id: string): Promise<PersistedRegistration | undefined> {
    return this.options.state.registration(id);
  }

  /** How many environments the cluster knows: what its limit counts. Rejects when the store does not answer. */
  environmentCount(): Promise<number> {
    return this.options.state.environmentCount();
  }

  /**
   * Evicts one environment no replica serves (no owner, or its owner's lease ran out) whose registration is
   * older than `olderThanMs`, cluster-wide and in one step per candidate (see `EnvironmentStates.evictUnserved`):
   * resolves with its id, or undefined when there is none. Rejects when the store does not answer.
   */
  evictUnserved(olderThanMs: number): Promise<string | undefined> {
    return this.options.state.environmentStates.evictUnserved(olderThanMs, this.leaseMs);
  }

  /** A log's stale writer was refused: the environment moved on, so this replica lets go of it. */
  staleLog(error: StaleEpochError): void {
    this.counts.staleLogWrites++;
    const epoch = this.parts.table.epochOf(error.environmentId);
    if (epoch !== 0 && epoch <= error.epoch) this.fence(error.environmentId, `its log refused epoch ${error.epoch} (now ${error.currentEpoch})`);
  }

  /** Lets go of `id` (see `HostedEnvironments.fence`), saying why. */
  fence(id: string, why: string): void {
    if (!this.parts.table.fence(id)) return;
    this.counts.fenced++;
    this.parts.log.warn({ environmentId: id }, `environment ${id}: another replica owns it now (${why})`);
  }

  /**
   * The first part of a drain: reports not ready at once (`refusal`, `/readyz`), stops renewing, and waits
   * `drainDelayMs` for the balancer's checks to take the replica out of the pool. The host's graceful stop
   * follows (`HostServer.drain`): its logs are closed before its executors' sockets, so that no process is
   * recorded failed, and each executor re-dials another replica, which takes its session back. Never rejects.
   */
  async drain(): Promise<void> {
    if (this.drainingSince !== undefined) return;
    this.drainingSince = this.parts.scheduler.now();
    this.parts.log.info({}, `draining: not ready now; letting ${this.parts.table.liveIds().length} executor(s) go in ${this.drainDelayMs} ms`);
    await this.stop();
    await new Promise<void>((resolve) => {
      const waiting = timer(this.drainDelayMs, this.parts.scheduler).subscribe(() => resolve());
      this.endDrainWait = () => {
        waiting.unsubscribe();
        resolve();
      };
    });
    this.endDrainWait = undefined;
  }

  /**
   * Adds `step` to what this replica writes back once the shared store lost its data (the operator API's
   * stdin records): after the environments it owns (their owners and epochs) and their logs.
   */
  onRewrite(step: RewriteStep): void {
    this.rewriteSteps.push(step);
  }

  /** One renewal round: a data loss rewritten first (again, until a round wrote it all), then each owned environment's lease. */
  private async tick(): Promise<void> {
    const { state } = this.options;
    const { log } = this.parts;
    try {
      // A second pass when a renewal was refused because the store lost its data meanwhile.
      for (let pass = 0; pass < 2; pass++) {
        if (await state.datasetLost()) this.rewritePending = true;
        if (this.rewritePending) {
          // Said in the store first: a replica started since the loss learns of it (see StoreLoss).
          await this.loss.note();
          await this.rewrite();
          this.rewritePending = false;
          this.loss.found(await state.bootId());
        }
        if (await this.renewLeases()) break;
        this.rewritePending = true;
      }
      if (this.rewritePending) return;
      await this.advertisement.renew();
      this.lastRenewedAt = this.parts.scheduler.now();
      await this.publisher.publishChanged();
      if (this.unreachableSaid) log.info({}, 'the shared store answers again: leases renewed');
      this.unreachableSaid = false;
    } catch (error: unknown) {
      const said = `the shared store does not answer (${messageOf(error)}): serving what this replica holds; upgrades get 503 once its leases are in doubt`;
      if (!this.unreachableSaid) log.error({}, said);
      this.unreachableSaid = true;
    }
  }

  /**
   * Renews each owned environment's lease; fences one whose renewal is refused because another replica
   * holds it. False (nothing fenced from then on) when a refusal came from the store losing its data since
   * this round looked (it names no owner then): the caller writes back what this replica owns, then renews.
   */
  private async renewLeases(): Promise<boolean> {
    const { state } = this.options;
    const { table, owner } = this.parts;
    for (const id of table.liveIds()) {
      const epoch = table.epochOf(id);
      if (epoch === 0) continue;
      if (await state.renewLease(id, owner, epoch, this.leaseMs)) continue;
      if (await state.datasetLost()) return false;
      this.refusedHere++;
      this.fence(id, `its lease at epoch ${epoch} could not be renewed`);
    }
    return true;
  }

  /**
   * The store lost its data (restarted empty, or from an AOF a second behind): each environment this
   * replica owns is written back from memory, owner and epoch first (unless the store holds a newer epoch:
   * then it is fenced), then its registration and session. Rejects when the store does not answer.
   */
  private async rewrite(): Promise<void> {
    const { state } = this.options;
    const { table, owner, log } = this.parts;
    this.counts.rewrites++;
    this.publisher.forget();
    const live = new Set(table.liveIds());
    log.warn({}, `the shared store lost its data: rewriting the ${live.size} environment(s) this replica owns`);
    const owned = new Map<string, number>();
    for (const id of live) {
      const epoch = table.epochOf(id);
      if (epoch === 0) continue;
      if (!(await state.restoreOwner(id, owner, epoch, table.signedAtOf(id)))) {
        this.fence(id, `the store holds a newer epoch than ${epoch}`);
        continue;
      }
      owned.set(id, epoch);
      const sessionId = table.sessionOf(id);
      const accessKeyId = this.parts.keyIdOf(id);
      if (sessionId !== undefined && accessKeyId !== undefined) await state.setSession(id, { sessionId, accessKeyId }, epoch);
    }
    for (const registration of this.parts.registrations()) if (live.has(registration.id)) await state.setRegistration(registration);
    const logs = (await this.options.rewriteLogs?.(owned)) ?? 0;
    let records = 0;
    for (const step of this.rewriteSteps) records += await step(owned);
    log.info({}, `rewrote the ${live.size} environment(s) this replica owns into the shared store, ${logs} log(s) and ${records} stdin record(s)`);
  }
}

/** Whether `error` is a stale writer's refusal (what fences a replica). */
export const isStale = (error: unknown): error is StaleEpochError => error instanceof StaleEpochError;
