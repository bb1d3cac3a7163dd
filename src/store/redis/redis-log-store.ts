/**
 * The log store port on Redis (issue 33, replicas): every process's output in a Redis STREAM, its
 * metadata in a HASH, both in its environment's hash tag (`./redis-log-keys`), so that any host of the
 * replicas reads any process's log and a host restarted elsewhere takes its processes back.
 *
 * - Writing: the owner appends in batches of up to 64 events per script call (`./redis-log`); the script
 *   refuses a writer whose epoch is below the environment's owner's, makes a seq already logged a no-op,
 *   and keeps the process within `quotaBytes` by dropping its oldest entries (this store does not keep the
 *   head: `keepsHead: false`), counting what went for exact `quota` markers.
 * - Reading: {@link PacedLogReader}s at the reader's pace (`XRANGE`), the owner's unwritten tail from
 *   memory; a log another writer appends to is followed by one `XREAD BLOCK` loop per environment on a
 *   dedicated connection (`./redis-follower`).
 * - Redis unreachable is this store's full disk: appends are held in memory up to `bufferBytes` per
 *   process and written when Redis answers again; past it the log fails alone with LOG_WRITE_FAILED, and
 *   its meta hash records what it lost, so that its readers on every replica get the same `writeFailed`.
 *   `flush()` (a host's graceful stop) and `close()` wait for Redis at most `flushTimeoutMs` and
 *   `closeTimeoutMs`: a log not written by then fails too (`ETIMEDOUT`).
 * - Lifetime: a process's keys expire (`PEXPIRE`) `retentionMs` after it ended (closed, failed, lost, or
 *   `unknown` when its host stopped), `releasedRetentionMs` after its release; the index of every process
 *   (`list()`) forgets expired ones lazily.
 */
import type Redis from 'ioredis';
import type { Observable, SchedulerLike } from 'rxjs';
import { asyncScheduler, EMPTY } from 'rxjs';
import { ClosedError } from '../../errors';
import type { HistoryFactory } from '../../exec/output-history';
import type { HistoriesOptions, LogPressure, LogStore, LogStoreCapabilities, LogStoreFailure, PacedLogReader } from '../log-store';
import type { ProcessKey, ProcessLaunch, ProcessMeta } from '../process-meta';
import { keyOf } from '../process-meta';
import { Followers } from './redis-follower';
import { RemoteLogReader } from './redis-remote-log';
import type { ReadBound } from './redis-log-read';
import { readHeld } from './redis-log-read';
import { TakenBackLogs } from './redis-taken-back';
import { PacedHistory } from '../paced-history';
import { decodeMeta, encodeMeta } from './redis-log-codec';
import type { ProcessLogKeys } from './redis-log-keys';
import { DEFAULT_REDIS_PREFIX, processLogKeys } from './redis-log-keys';
import type { RedisLogStoreOptions } from './redis-log-options';
import * as defaults from './redis-log-options';
import { LogScripts } from './redis-log-scripts';
import { LocalLogs } from './redis-local-logs';
import type { MetaWrites } from './redis-meta-writes';
import { Reachability } from './redis-reachability';
import { loseStaleWriteBacks } from './stale-write-backs';

export type { RedisLogStoreOptions } from './redis-log-options';
/** What the Redis store can do: paced, durable, fallible writes; it drops the oldest at a quota; no files. */
const CAPABILITIES: LogStoreCapabilities = { ownPace: true, durable: true, keepsHead: false, writeFailures: true, figures: false, listsEnded: true };


/** The host's output logs on Redis (see the module's doc). Made by {@link RedisLogStore.open}; its owner calls `close()`. */
export class RedisLogStore implements LogStore {
  readonly capabilities = CAPABILITIES;
  readonly figures = undefined;
  readonly syncs$: Observable<number> = EMPTY;
  /** The scripts on the store's connection (`calls` counts them). */
  readonly scripts: LogScripts;
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly scheduler: SchedulerLike;
  private readonly reachability: Reachability;
  private readonly locals: LocalLogs;
  private readonly remotes = new Map<string, RemoteLogReader>();
  private readonly adopted: TakenBackLogs;
  private readonly followers: Followers;
  private closed = false;

  private constructor(private readonly options: RedisLogStoreOptions) {
    this.redis = options.redis;
    this.prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.scripts = new LogScripts(this.redis);
    this.reachability = new Reachability(this.redis, this.scheduler, options.stallMs ?? defaults.DEFAULT_REDIS_STALL_MS, () => {
      for (const entry of this.locals.entries.values()) entry.log.checkBuffer();
    });
    this.locals = new LocalLogs(this.redis, this.scripts, this.prefix, this.scheduler, this.reachability, {
      quotaBytes: options.quotaBytes ?? defaults.DEFAULT_REDIS_QUOTA_BYTES,
      bufferBytes: options.bufferBytes ?? defaults.DEFAULT_REDIS_BUFFER_BYTES,
      pressureBytes: options.pressureBytes ?? defaults.DEFAULT_REDIS_PRESSURE_BYTES,
      retentionMs: this.retentionMs,
    });
    const parts = { redis: this.redis, locals: this.locals, keysOf: (key: ProcessKey) => this.keysOf(key), bound: this.bound(defaults.ADOPT_READ_STALLS) };
    this.adopted = new TakenBackLogs({ ...parts, dropRemote: (id) => this.remotes.delete(id) });
    const connect = options.subscriber ?? (() => this.redis.duplicate());
    this.followers = new Followers(this.redis, connect, this.scheduler, options.followBlockMs ?? defaults.DEFAULT_REDIS_FOLLOW_BLOCK_MS);
  }

  /** Opens the store on `options.redis` (nothing is read: the processes of before are found in Redis as they are asked for). */
  static readonly open = (options: RedisLogStoreOptions): Promise<RedisLogStore> => Promise.resolve(new RedisLogStore(options));

  get failures$(): Observable<LogStoreFailure> {
    return this.locals.failures.asObservable();
  }

  get pressure$(): Observable<LogPressure> {
    return this.locals.pressures.asObservable();
  }

  /** Whether the store counts Redis as answering (see `unready`), now and at each change; completes on `close()`. */
  get reachable$(): Observable<boolean> {
    return this.reachability.changes$;
  }

  /** A read bound of `stalls` times `stallMs`. */
  private readonly bound = (stalls: number): ReadBound => (read) => this.reachability.within(this.reachability.stallMs * stalls, read);
  /** For tests (the contract's `failWrites`): while on, Redis counts as unreachable, as a paused server would. */
  readonly simulateOutage = (on: boolean): void => this.reachability.simulateOutage(on);

  histories(environmentId: string, { epoch, writer = '' }: HistoriesOptions): HistoryFactory {
    this.locals.fence(environmentId, epoch);
    return (processId, launch) => {
      if (this.closed) throw new ClosedError('the output log store is closed');
      const key = { environmentId, processId };
      const adopted = this.adopted.take(key);
      this.remotes.delete(keyOf(key));
      const log = this.locals.make(key, { epoch, name: writer }, launch, adopted);
      // A process lost with its executor's session is `lost`, saying why; any other failure `failed`.
      const onFailed = (lost: string | undefined): void => void (lost === undefined ? this.markFailed(key) : this.markLost(key, lost, epoch));
      // Once closed, a process that never ran stays (`unknown`: the next host finds the executor has no such process).
      const onDiscard = (): void => void (this.closed || this.locals.discard(key));
      return new PacedHistory(log, { onFailed, onRelease: () => void this.release(key), onDiscard, ready: () => this.metaWritten(key) });
    };
  }

  /**
   * The log of a process: the one this store writes while it is the environment's writer, else one read from
   * Redis (the same object while it is held), where another writer goes on. Rejects with OutputLogReadError.
   */
  async openReader(key: ProcessKey): Promise<PacedLogReader | undefined> {
    const keys = this.keysOf(key);
    const local = this.locals.get(key);
    // Redis unreachable: this store's own log is served from what it holds (the owner keeps serving from memory).
    if (local !== undefined && !this.reachability.now) return local.log;
    const held = await readHeld(this.redis, keys, key.processId, this.bound(1)).catch((error: unknown) => {
      if (local === undefined) throw error;
      return undefined;
    });
    if (held === undefined) return local?.log;
    this.locals.fence(key.environmentId, held.ownerEpoch);
    // This store's log is the process's while this store writes it, and once it closed here (whole): a log
    // this store stopped writing (sealed when its manager let go) may hold only a part of what Redis does.
    if (local !== undefined && !local.refused && (local.log.epoch >= held.ownerEpoch || local.log.end === 'closed')) return local.log;
    const id = keyOf(key);
    if (!held.exists) {
      this.remotes.delete(id);
      return local?.log;
    }
    const reader = this.remotes.get(id) ?? new RemoteLogReader(key, keys, this.redis, this.followers.of(key.environmentId));
    this.remotes.set(id, reader);
    await reader.sync(); // its lastSeq is what the log holds now, as a local log's is (`…/log` reads up to it)
    return reader;
  }

  /** Every process of the index whose keys are still there (expired ones leave the index here). */
  list(): Promise<readonly ProcessMeta[]> {
    return this.metas.list();
  }

  async meta(key: ProcessKey): Promise<ProcessMeta | undefined> {
    return decodeMeta(key, await this.redis.hgetall(this.keysOf(key).meta));
  }

  describe(key: ProcessKey, launch: ProcessLaunch): Promise<void> {
    return this.patch(key, { argv: [...launch.argv], tty: launch.tty });
  }

  noteStartedBy(key: ProcessKey, startedBy: string): Promise<void> {
    return this.patch(key, { startedBy });
  }

  /**
   * The history was released: its log takes no more appends (what it took is still written); its keys
   * expire after `releasedRetentionMs`. At its writer's epoch: a replica that let go of the environment
   * (its manager closed, releasing its processes) cannot release them under the replica that took over.
   * Once the store is closed it is not (the host stops, or drains, and lets its executors go: another
   * replica takes them back as they were, a stdin feeder with them).
   */
  release(key: ProcessKey): Promise<void> {
    const log = this.locals.get(key)?.log;
    void log?.seal();
    return this.closed ? Promise.resolve() : this.patch(key, { released: true }, this.releasedRetentionMs, log?.epoch);
  }

  /** Deletes the process's keys and leaves the index; a log this store writes takes nothing more (its readers get an `evicted` marker). */
  async remove(key: ProcessKey): Promise<void> {
    const id = keyOf(key);
    this.locals.get(key)?.log.removed();
    this.locals.drop(key);
    this.remotes.delete(id);
    this.adopted.forget(key);
    await this.metas.remove(key);
  }

  /** Forgets the processes whose keys expired: from the index, and the logs this store wrote. Never rejects. */
  async enforce(): Promise<void> {
    try {
      await this.list();
      for (const { log } of [...this.locals.entries.values()]) if (log.end !== undefined && (await this.redis.exists(log.keys.meta)) === 0) this.locals.drop(log.key);
    } catch {
      // Redis unreachable: the next sweep does it
    }
  }

  /** See `MetaWrites.adoptable`: `unknown`, taken back and not continued, or running under a stale writer (this store's own too); not released. */
  adoptable(environmentId: string): Promise<readonly ProcessMeta[]> {
    return this.metas.adoptable(environmentId, (meta) => this.adopted.has(meta));
  }

  async adopt(key: ProcessKey, epoch: number): Promise<number | undefined> {
    if (this.closed) throw new ClosedError('the output log store is closed');
    const lastSeq = await this.adopted.adopt(key, epoch);
    if (this.closed) throw new ClosedError('the output log store is closed');
    return lastSeq;
  }

  /** See `LogStore.markLost`; at `epoch` (a writer's: refused once another owns the environment), or unchecked (-1, a take-back's). */
  async markLost(key: ProcessKey, reason: string, epoch = -1): Promise<void> {
    this.adopted.forget(key);
    const meta = await this.meta(key).catch(() => undefined);
    if (meta === undefined || meta.state === 'closed' || meta.state === 'failed') return;
    const entry = this.locals.get(key);
    if (entry !== undefined) entry.state = 'lost';
    void entry?.log.seal();
    await this.patch(key, { state: 'lost', lostReason: reason, endedAt: meta.endedAt ?? this.scheduler.now() }, this.retentionMs, epoch);
  }

  /**
   * The process's stream failed on the host's side: state `failed`; its log takes no more appends. Once the
   * store is closed it is not: the host stops and lets its executors go (`unknown`, to be taken back).
   */
  markFailed(key: ProcessKey): Promise<void> {
    const entry = this.locals.get(key);
    if (this.closed || entry === undefined || !(entry.state === 'running' || entry.state === 'exited')) return Promise.resolve();
    entry.state = 'failed';
    void entry.log.seal();
    // At its writer's epoch: a replica another took the environment from cannot fail the process there.
    return this.patch(key, { state: 'failed', endedAt: this.scheduler.now() }, this.retentionMs, entry.log.epoch);
  }

  readonly metaWritten = (key: ProcessKey): Promise<void> => this.metas.written(key);

  /** `redis unreachable` while the connection is down, a script call stalls, or Redis does not answer a PING within `stallMs`. */
  async unready(): Promise<string | undefined> {
    if (!this.reachability.now) return 'redis unreachable';
    const answered = await this.reachability.within(this.reachability.stallMs, this.redis.ping().then(() => true, () => false));
    return answered === true ? undefined : 'redis unreachable';
  }

  /**
   * Writes what the logs took, waiting at most `flushTimeoutMs`: a log not written by then fails, LOG_WRITE_FAILED `ETIMEDOUT`
   * (`failures$`; its readers, on every replica once Redis answers, get a `writeFailed` marker for what it held). Never rejects.
   */
  flush(): Promise<void> {
    return this.locals.flushWithin(this.options.flushTimeoutMs ?? defaults.DEFAULT_REDIS_FLUSH_TIMEOUT_MS);
  }
  /** Redis lost its data: writes back the logs it writes (`LocalLogs.rewrite`), then loses a stale replica's write-backs (`loseStaleWriteBacks`). */
  readonly rewrite = async (owned: ReadonlyMap<string, number>): Promise<number> => {
    const written = await this.locals.rewrite(owned);
    const writes = (key: ProcessKey): boolean => this.locals.get(key) !== undefined;
    await loseStaleWriteBacks({ adoptable: (id) => this.metas.adoptable(id, () => false), writes, markLost: (key, why, epoch) => this.markLost(key, why, epoch) }, owned);
    return written;
  };

  /**
   * Marks the processes still running `unknown` (a restarted host takes them back), writes what the logs
   * took (waiting at most `closeTimeoutMs`: a log not written by then fails, LOG_WRITE_FAILED
   * `ETIMEDOUT`), stops the follow loops and their connections, completes the streams. The caller's
   * connection stays open. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.locals.leave(this.scheduler.now(), this.retentionMs, this.adopted.keys());
    await this.locals.flushWithin(this.options.closeTimeoutMs ?? defaults.DEFAULT_REDIS_CLOSE_TIMEOUT_MS);
    this.followers.stop();
    this.reachability.stop();
    this.locals.complete();
  }

  private get metas(): MetaWrites {
    return this.locals.metas;
  }

  private get retentionMs(): number {
    return this.options.retentionMs ?? defaults.DEFAULT_REDIS_RETENTION_MS;
  }

  private get releasedRetentionMs(): number {
    return Math.min(this.retentionMs, this.options.releasedRetentionMs ?? defaults.DEFAULT_REDIS_RELEASED_RETENTION_MS);
  }

  private keysOf(key: ProcessKey): ProcessLogKeys {
    return processLogKeys(this.prefix, key);
  }

  private patch(key: ProcessKey, patch: Partial<ProcessMeta>, ttlMs = 0, epoch = -1): Promise<void> {
    return this.metas.write(key, { epoch, mode: 'update', ttlMs, fields: encodeMeta(patch) });
  }
}
