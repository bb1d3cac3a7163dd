/**
 * The state port on Redis (issue 33, replicas): the state several hosts share, so that any of them can
 * take an executor back. The keys are `./redis-keys`'s: each environment's records under one hash tag, so
 * every write that carries an epoch is one Lua script (`./redis-scripts`) that reads the environment's
 * owner hash and refuses a stale epoch in the same step as it writes (StaleEpochError, nothing changed).
 * Never a secret: tokens only as digests (the port gives nothing else), no stdin byte; the Redis url
 * (it may carry a password) is the caller's and never logged here.
 *
 * Beyond the port, what cluster mode reads: a registration, the count of environments, an owner's lease, the rewrite after Redis
 * lost its data, the refused stale writes, what owners say of their environments and where replicas take forwarded calls.
 */
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { StaleEpochError } from '../../errors';
import type { ProcessKey } from '../process-meta';
import type { ClaimOptions, EnvironmentOwner, EnvironmentSession, NewStartRecord, PersistedEnvironment, PersistedRegistration, StartRecord, StateStore } from '../state-store';
import { RECORDED_STARTS, sortedById, STALE_UPGRADE_WINDOW_MS } from '../state-store';
import type { StdinRecord } from '../stdin-record';
import { stdinFields } from '../stdin-record';
import { markBoot, randomId, RedisBoot } from './redis-boot';
import { environmentRecords, RedisEnvironmentStates, register } from './redis-environment-states';
import { RedisCalls } from './redis-calls';
import { RedisReplicas } from './redis-replicas';
import * as keys from './redis-keys';
import { claimedEpoch, ownerOf, registrationOf, sessionOf, startOf, stdinOf } from './redis-records';
import type { LuaScript, RedisClient } from './redis-scripts';
import type { EpochMode, RedisStateStoreOptions } from './redis-state-options';
import * as scripts from './redis-scripts';
import { indexedStart, indexStart, unindexStart } from './redis-starts';

function checkEpochArgument(epoch: number): void {
  if (!Number.isSafeInteger(epoch)) throw new TypeError(`an epoch is an integer, not ${String(epoch)}`);
}

/**
 * A host's state on Redis (see the module's doc). Made by {@link RedisStateStore.open}; each write is in
 * Redis when its promise resolves (one connection: the calls of one store reach Redis in the order made).
 */
export class RedisStateStore implements StateStore {
  private readonly calls = new RedisCalls('the host state is closed');
  private closing: Promise<void> | undefined;
  private refused = 0;
  /** What owners publish of their environments, read and evicted by (`./redis-environment-states`); where replicas take forwarded calls. */
  readonly environmentStates: RedisEnvironmentStates;
  readonly replicas: RedisReplicas;

  private constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly scheduler: SchedulerLike,
    private readonly maxStarts: number,
    private readonly epochs: EpochMode,
    private readonly ownsConnection: boolean,
    private readonly boot: RedisBoot,
  ) {
    this.environmentStates = new RedisEnvironmentStates(redis, prefix, (task) => this.run(task));
    this.replicas = new RedisReplicas(redis, prefix, (task) => this.run(task));
  }

  /**
   * A store on `options.redis` under `options.prefix`. Sets the boot marker when Redis has none, and remembers it ({@link datasetLost}).
   * Rejects with a TypeError for a prefix holding `{` or `}`, or with Redis's error (the connection is let go when the store owns it).
   */
  static async open(options: RedisStateStoreOptions): Promise<RedisStateStore> {
    const { redis, ownsConnection = false } = options;
    try {
      const prefix = keys.checkPrefix(options.prefix ?? keys.DEFAULT_PREFIX);
      const boot = new RedisBoot(redis, prefix, await markBoot(redis, prefix));
      const maxStarts = options.maxStarts ?? RECORDED_STARTS;
      return new RedisStateStore(redis, prefix, options.scheduler ?? asyncScheduler, maxStarts, options.epochs ?? 'counted', ownsConnection, boot);
    } catch (error: unknown) {
      if (ownsConnection) redis.disconnect();
      throw error;
    }
  }

  /** How many writes this store refused with StaleEpochError since it opened (the host's metrics read it). */
  get staleRefusals(): number {
    return this.refused;
  }

  madeTokenDigest(): Promise<string | undefined> {
    return this.run(async () => (await this.redis.get(keys.madeTokenKey(this.prefix))) ?? undefined);
  }

  setMadeTokenDigest(digest: string): Promise<void> {
    return this.run(async () => void (await this.redis.set(keys.madeTokenKey(this.prefix), digest)));
  }

  registrations(): Promise<readonly PersistedRegistration[]> {
    return this.run(async () => sortedById(defined(await this.eachEnvironment((id) => this.readRegistration(id)))));
  }

  /** Environment `id`'s latest registration, if one was recorded (one read, where `registrations()` reads them all). */
  registration(id: string): Promise<PersistedRegistration | undefined> {
    return this.run(() => this.readRegistration(id));
  }

  setRegistration(registration: PersistedRegistration): Promise<void> {
    return this.run(() => register(this.redis, this.prefix, registration));
  }

  /** How many environments have a registration or a session, across every host on this store (one read). */
  environmentCount(): Promise<number> {
    return this.run(() => this.redis.scard(keys.environmentsKey(this.prefix)));
  }

  environment(id: string): Promise<PersistedEnvironment | undefined> {
    return this.run(() => this.readSession(id));
  }

  environments(): Promise<readonly PersistedEnvironment[]> {
    return this.run(async () => sortedById(defined(await this.eachEnvironment((id) => this.readSession(id)))));
  }

  owner(id: string): Promise<EnvironmentOwner | undefined> {
    return this.run(async () => ownerOf(await this.redis.hgetall(keys.ownerKey(this.prefix, id))));
  }

  claim(id: string, owner: string, options?: ClaimOptions): Promise<number> {
    return this.run(async () => {
      const args = [owner, this.epochs, options?.signedAt ?? '', STALE_UPGRADE_WINDOW_MS];
      return claimedEpoch(id, options?.signedAt, await scripts.CLAIM.run(this.redis, [keys.ownerKey(this.prefix, id)], args));
    });
  }

  setSession(id: string, session: EnvironmentSession, epoch: number): Promise<void> {
    const now = this.scheduler.now();
    // The id goes to the set of ids beside the checked write (another hash slot): listed without a session (refused, or failed half way), it reads as absent.
    return this.run(async () => {
      const listed = this.redis.sadd(keys.environmentsKey(this.prefix), id);
      const written = this.owned(id, epoch, scripts.SET_SESSION, [keys.sessionKey(this.prefix, id)], [session.sessionId, session.accessKeyId, now]);
      await Promise.all([listed, written]);
    });
  }

  forget(id: string): Promise<void> {
    const p = this.prefix;
    return this.run(async () => {
      await scripts.FORGET.run(this.redis, environmentRecords(p, id), []);
      // Unlisted last (another hash slot): an id is never unlisted while its records remain.
      await this.redis.srem(keys.environmentsKey(p), id);
    });
  }

  start(digest: string): Promise<StartRecord | undefined> {
    return this.run(async () => {
      const indexed = await this.indexed(digest);
      return indexed === undefined ? undefined : startOf(await this.redis.hgetall(keys.startKey(this.prefix, indexed.environmentId, digest)));
    });
  }

  recordStart(start: NewStartRecord, epoch: number): Promise<void> {
    const { digest, environmentId, processId, fingerprint } = start;
    const now = this.scheduler.now();
    const nonce = randomId();
    return this.run(async () => {
      const record = [keys.startKey(this.prefix, environmentId, digest)];
      await this.owned(environmentId, epoch, scripts.RECORD_START, record, [digest, environmentId, processId, fingerprint, now, nonce]);
      // The index is a second step (the global hash slot, see ./redis-starts): not yet indexed, a start is found by no read.
      await indexStart(this.redis, this.prefix, digest, environmentId, nonce, this.maxStarts);
    });
  }

  markStarted(digest: string, epoch: number): Promise<void> {
    return this.run(async () => {
      const indexed = await this.indexed(digest);
      if (indexed === undefined) return;
      await this.owned(indexed.environmentId, epoch, scripts.MARK_STARTED, [keys.startKey(this.prefix, indexed.environmentId, digest)], []);
    });
  }

  forgetStart(digest: string, epoch: number): Promise<void> {
    const p = this.prefix;
    return this.run(async () => {
      const indexed = await this.indexed(digest);
      if (indexed === undefined) return;
      const reply = await this.owned(indexed.environmentId, epoch, scripts.FORGET_START, [keys.startKey(p, indexed.environmentId, digest)], []);
      const nonce = Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : indexed.nonce;
      await unindexStart(this.redis, p, digest, indexed.environmentId, nonce);
    });
  }

  stdin(key: ProcessKey): Promise<StdinRecord | undefined> {
    return this.run(async () => stdinOf(await this.redis.get(keys.stdinKey(this.prefix, key.environmentId, key.processId))));
  }

  setStdin(key: ProcessKey, record: StdinRecord, epoch: number): Promise<void> {
    const json = JSON.stringify(stdinFields(record));
    return this.run(async () => void (await this.owned(key.environmentId, epoch, scripts.SET_STDIN, this.stdinKeys(key), [json])));
  }

  forgetStdin(key: ProcessKey, epoch: number): Promise<void> {
    return this.run(async () => void (await this.owned(key.environmentId, epoch, scripts.FORGET_STDIN, this.stdinKeys(key), [])));
  }

  /**
   * Renews `owner`'s lease on environment `id` for `ttlMs` (the key `…:lease`, with PX): true when the
   * owner hash still says (`owner`, `epoch`); false, and nothing written, when another owner or epoch
   * holds the environment (the caller is fenced: it must let the environment go).
   */
  renewLease(id: string, owner: string, epoch: number, ttlMs: number): Promise<boolean> {
    return this.run(async () => {
      checkEpochArgument(epoch);
      if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new TypeError(`a lease lasts a positive integer of ms, not ${String(ttlMs)}`);
      return (await scripts.RENEW_LEASE.run(this.redis, [keys.ownerKey(this.prefix, id), keys.leaseKey(this.prefix, id)], [owner, epoch, ttlMs])) === 1;
    });
  }

  /**
   * Writes environment `id`'s owner hash as (`owner`, `epoch`) only when Redis holds no epoch for it or a
   * lower one: after Redis restarted empty, each owner rewrites what it holds from memory. True when
   * written, or when Redis already holds the same; false when another owner or a higher epoch is there.
   */
  restoreOwner(id: string, owner: string, epoch: number, signedAt?: number): Promise<boolean> {
    return this.run(async () => {
      checkEpochArgument(epoch);
      return (await scripts.RESTORE_OWNER.run(this.redis, [keys.ownerKey(this.prefix, id)], [owner, epoch, signedAt ?? ''])) === 1;
    });
  }

  /** The boot marker Redis holds now (`<prefix>:{global}:boot`), set first when it has none. */
  bootId(): Promise<string> {
    return this.run(() => this.boot.marker());
  }

  /** Whether Redis lost its data since this store last looked (see `RedisBoot.lost`): the next call says false. */
  datasetLost(): Promise<boolean> {
    return this.run(() => this.boot.lost());
  }

  /** Notes in Redis, for `forMs`, that a replica found its data lost now: `recentLoss` says so meanwhile, to every replica. */
  noteLoss(forMs: number): Promise<void> {
    return this.run(() => this.boot.note(this.scheduler.now(), forMs));
  }

  /** Whether a loss of Redis's data was noted (`noteLoss`) and its time has not run out. */
  recentLoss(): Promise<boolean> {
    return this.run(() => this.boot.noted());
  }

  flush(): Promise<void> {
    return this.calls.settled();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.calls.close();
      if (!this.ownsConnection) return;
      try {
        await this.redis.quit();
      } catch {
        this.redis.disconnect();
      }
    })();
    return this.closing;
  }

  /** `task` as one of this store's calls (see `./redis-calls`). */
  private run<T>(task: () => Promise<T>): Promise<T> {
    return this.calls.run(task);
  }

  /** Runs a checked write of environment `id` (KEYS: its owner hash, then `records`; ARGV: `epoch`, then `args`). */
  private async owned(id: string, epoch: number, script: LuaScript, records: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    checkEpochArgument(epoch);
    const reply = await script.run(this.redis, [keys.ownerKey(this.prefix, id), ...records], [epoch, ...args]);
    const current = scripts.staleEpochOf(reply);
    if (current === undefined) return reply;
    this.refused += 1;
    throw new StaleEpochError(id, epoch, current);
  }

  private stdinKeys(key: ProcessKey): string[] {
    return [keys.stdinKey(this.prefix, key.environmentId, key.processId), keys.stdinSetKey(this.prefix, key.environmentId)];
  }

  private async readSession(id: string): Promise<PersistedEnvironment | undefined> {
    return sessionOf(id, await this.redis.hgetall(keys.sessionKey(this.prefix, id)));
  }

  private async readRegistration(id: string): Promise<PersistedRegistration | undefined> {
    return registrationOf(id, await this.redis.hgetall(keys.registrationKey(this.prefix, id)));
  }

  /** `read` of every listed environment id, at once. */
  private async eachEnvironment<T>(read: (id: string) => Promise<T>): Promise<T[]> {
    return Promise.all((await this.redis.smembers(keys.environmentsKey(this.prefix))).map(read));
  }

  private indexed(digest: string): ReturnType<typeof indexedStart> {
    return indexedStart(this.redis, this.prefix, digest);
  }
}

const defined = <T>(values: readonly (T | undefined)[]): T[] => values.filter((value): value is T => value !== undefined);
