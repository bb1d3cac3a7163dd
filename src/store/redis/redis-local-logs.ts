/**
 * The logs one Redis log store writes: each process's {@link RedisLog} with the state the store last wrote
 * for it, each environment's newest writer epoch (a log written at an older one is fenced: it takes no
 * more appends, and one StaleEpochError says so), and what the logs tell the store: their failures,
 * backpressure, exits and closes (the meta hash follows them, at the writer's epoch). A failed log's
 * meta hash records what it could not write (`WriteFailure`) at once, then as it counts more lost (at
 * most once per {@link FAILURE_META_MS}, and with its exit and close), so that readers on every replica
 * get the owner's `writeFailed` marker.
 */
import type Redis from 'ioredis';
import type { SchedulerLike, Subscription } from 'rxjs';
import { Subject } from 'rxjs';
import type { LogWriteOperation } from '../../errors';
import { OutputLogError, StaleEpochError } from '../../errors';
import type { HistoryLaunch } from '../../exec/output-history';
import { errnoOf } from '../errno';
import type { LogPressure, LogStoreFailure } from '../log-store';
import type { ProcessKey, ProcessLogState } from '../process-meta';
import { keyOf, startingMeta } from '../process-meta';
import type { ContextLog, RedisLogContext, RedisLogStart } from './redis-log-context';
import { RedisLog } from './redis-log';
import { encodeMeta, encodeWriteFailure } from './redis-log-codec';
import { processLogKeys } from './redis-log-keys';
import type { LogScripts } from './redis-log-scripts';
import type { MetaWrite } from './redis-meta-writes';
import { MetaWrites } from './redis-meta-writes';
import type { Reachability } from './redis-reachability';

/** How often at most a failed log's meta hash is told it counted more lost (its exit and close tell it at once). */
export const FAILURE_META_MS = 1_000;

/** A process this store writes (or wrote). */
export interface LocalEntry {
  /** Its log. */
  readonly log: RedisLog;
  /** Its state as this store last wrote it. */
  state: ProcessLogState;
  /** A StaleEpochError was reported for it. */
  refused: boolean;
}

/** The bounds and retention the logs are written with. */
export interface LocalLogsOptions {
  /** See `RedisLogStoreOptions.quotaBytes`. */
  readonly quotaBytes: number;
  /** See `RedisLogStoreOptions.bufferBytes`. */
  readonly bufferBytes: number;
  /** See `RedisLogStoreOptions.pressureBytes`. */
  readonly pressureBytes: number;
  /** See `RedisLogStoreOptions.retentionMs`. */
  readonly retentionMs: number;
}

/** The logs a store writes (see the module's doc). */
export class LocalLogs {
  /** The entries, by `keyOf`. */
  readonly entries = new Map<string, LocalEntry>();
  /** Failures of the logs and of the store's writes; stale writers refused. */
  readonly failures = new Subject<LogStoreFailure>();
  /** Each change of a log's backpressure. */
  readonly pressures = new Subject<LogPressure>();
  /** The meta writes and the index. */
  readonly metas: MetaWrites;
  private readonly epochs = new Map<string, number>();
  private readonly context: RedisLogContext;
  /** The failed logs whose meta hash is to be told what they lost since, by `keyOf`. */
  private readonly failureWrites = new Map<string, Subscription>();

  constructor(
    redis: Redis,
    scripts: LogScripts,
    private readonly prefix: string,
    private readonly scheduler: SchedulerLike,
    private readonly reachability: Reachability,
    private readonly options: LocalLogsOptions,
  ) {
    const report = (processId: string, operation: LogWriteOperation, error: unknown): void => this.report(processId, operation, error);
    this.metas = new MetaWrites(redis, scripts, prefix, report, (id) => this.entries.has(id));
    this.context = {
      redis,
      scripts,
      scheduler,
      ...options,
      reachable: () => reachability.now,
      whenReachable: () => reachability.whenReachable(),
      send: (call) => reachability.send(call),
      afterError: () => reachability.afterError(),
      answered: () => reachability.answered(),
      failed: (log, error) => {
        this.emit(error);
        this.ifCurrent(log, (entry) => this.writeFailure(entry));
      },
      lost: (log) => this.ifCurrent(log, (entry) => this.failureLater(entry)),
      refused: (log, currentEpoch) => this.ifCurrent(log, (entry) => this.refuse(entry, currentEpoch)),
      pressure: (pressure) => {
        if (!this.pressures.closed) this.pressures.next(pressure);
      },
      lifecycle: (log, event) =>
        this.ifCurrent(log, (entry) => {
          const now = this.scheduler.now();
          entry.state = event.type;
          // A failed log's exit and close say what it lost by then too.
          const failure = this.failureFields(entry);
          if (event.type === 'exited') {
            this.write(entry, { mode: 'update', ttlMs: 0, fields: [...encodeMeta({ state: 'exited', exitCode: event.exitCode, exitedAt: now }), ...failure] });
          } else {
            const closedAt = [...encodeMeta({ state: 'closed', endedAt: now }), 'closedSeq', String(event.seq)];
            this.write(entry, { mode: 'update', ttlMs: options.retentionMs, fields: [...closedAt, ...failure] });
          }
        }),
    };
  }

  /** The entry of `key`, if this store writes its log. */
  get(key: ProcessKey): LocalEntry | undefined {
    return this.entries.get(keyOf(key));
  }

  /**
   * A new log for `key` written by `writer` (its name and epoch): continuing `adopted` (a process taken back), else a new one
   * whose meta hash is made now (what its keys held goes first) and indexed. A log this store wrote for
   * the key before takes nothing more. A stale `epoch` fences it at once.
   */
  make(key: ProcessKey, writer: { readonly epoch: number; readonly name: string }, launch: HistoryLaunch | undefined, adopted: RedisLogStart | undefined): RedisLog {
    this.get(key)?.log.removed();
    const epoch = writer.epoch;
    const log = new RedisLog(key, processLogKeys(this.prefix, key), epoch, writer.name, this.context, adopted);
    const entry: LocalEntry = { log, state: 'running', refused: false };
    this.entries.set(keyOf(key), entry);
    if (adopted === undefined) {
      const meta = startingMeta(key, launch ?? { argv: [], tty: false }, this.scheduler.now());
      const counters = ['lastSeq', '0', 'storedBytes', '0', 'trimmedTo', '0', 'droppedBytes', '0'];
      this.write(entry, { mode: 'create', ttlMs: 0, fields: [...encodeMeta(meta), 'epoch', String(epoch), ...counters] });
      this.metas.index(key, meta.startedAt);
    }
    if (epoch < this.epochOf(key.environmentId)) this.refuse(entry, this.epochOf(key.environmentId));
    return log;
  }

  /**
   * The process never ran (its start was refused, `OutputHistory.discard`): its log takes nothing more and
   * its keys go, at its writer's epoch (a store another took the environment from leaves them to the take-back).
   */
  discard(key: ProcessKey): Promise<void> {
    const log = this.get(key)?.log;
    if (log === undefined) return Promise.resolve();
    log.removed();
    this.drop(key);
    return this.metas.drop(key, log.epoch);
  }

  /** Lets go of the log of `key` (removed, or expired once ended): its entry and what the meta writes remembered of it. */
  drop(key: ProcessKey): void {
    this.entries.delete(keyOf(key));
    this.metas.forget(key);
    this.failureWrites.get(keyOf(key))?.unsubscribe();
    this.failureWrites.delete(keyOf(key));
  }

  /** The newest writer epoch of `environmentId` seen (0: none). */
  epochOf(environmentId: string): number {
    return this.epochs.get(environmentId) ?? 0;
  }

  /** A newer writer for `environmentId`: the logs written at an older epoch take no more appends. */
  fence(environmentId: string, epoch: number): void {
    if (epoch <= this.epochOf(environmentId)) return;
    this.epochs.set(environmentId, epoch);
    for (const entry of this.entries.values()) {
      if (entry.log.key.environmentId === environmentId && entry.log.epoch < epoch && entry.log.end === undefined) this.refuse(entry, epoch);
    }
  }

  /**
   * The store closes: each log still running here is left `unknown` (at its epoch), as is each process taken
   * back and not continued (`takenBack`), with `retentionMs` to be taken back in; every log takes no more appends.
   */
  leave(now: number, retentionMs: number, takenBack: readonly ProcessKey[]): void {
    const fields = encodeMeta({ state: 'unknown', endedAt: now });
    for (const entry of this.entries.values()) {
      if (entry.state === 'running' || entry.state === 'exited') {
        entry.state = 'unknown';
        void this.metas.write(entry.log.key, { epoch: entry.log.epoch, mode: 'update', ttlMs: retentionMs, fields });
      }
      void entry.log.seal();
    }
    for (const key of takenBack) void this.metas.write(key, { epoch: -1, mode: 'update', ttlMs: retentionMs, fields });
  }

  /**
   * Redis lost its data (restarted empty): writes back the meta hash and index entry of every log this
   * store writes for an environment its host still owns at the log's epoch (`owned`), with its counters
   * from now on (appends go on after the last confirmed seq; what Redis lost reads as one `evicted`
   * marker). A log of an environment the host let go of, or one refused, is the new owner's to write back:
   * written here it would put back a stale state (a replica fenced out of it marked its processes failed).
   * Resolves with how many; never rejects.
   */
  async rewrite(owned: ReadonlyMap<string, number>): Promise<number> {
    const entries = [...this.entries.values()].filter(({ log, refused }) => !refused && owned.get(log.key.environmentId) === log.epoch);
    for (const { log } of entries) {
      const counters = ['epoch', String(log.epoch), 'lastSeq', String(log.confirmed), 'storedBytes', '0', 'trimmedTo', '0', 'droppedBytes', '0'];
      await this.metas.restore(log.key, log.epoch, counters);
    }
    return entries.length;
  }

  /**
   * Waits at most `ms` for every log and meta write so far, then fails each log still holding events it did
   * not write (LOG_WRITE_FAILED `ETIMEDOUT`: its readers get a `writeFailed` marker). Never rejects.
   */
  async flushWithin(ms: number): Promise<void> {
    const written = Promise.all([...this.entries.values()].map((entry) => entry.log.flush())).then(() => this.metas.all());
    await this.reachability.within(ms, written);
    for (const entry of this.entries.values()) if (entry.log.backlogBytes > 0) entry.log.fail('ETIMEDOUT');
  }

  /** Reports a failure of the store's own writes. */
  report(processId: string, operation: LogWriteOperation, error: unknown): void {
    this.emit(new OutputLogError(processId, errnoOf(error), operation));
  }

  /** Completes the streams (the store closed), and drops the failed logs' later meta writes. */
  complete(): void {
    for (const later of this.failureWrites.values()) later.unsubscribe();
    this.failureWrites.clear();
    this.failures.complete();
    this.pressures.complete();
  }

  /** A failed log's meta hash is told what it could not write, now (a later write of it is no longer needed). */
  private writeFailure(entry: LocalEntry): void {
    const failure = this.failureFields(entry);
    if (failure.length > 0) this.write(entry, { mode: 'update', ttlMs: 0, fields: failure });
  }

  /** The meta fields of what `entry`'s log could not write ([] before it failed); the write they go with makes a later one needless. */
  private failureFields(entry: LocalEntry): string[] {
    const id = keyOf(entry.log.key);
    this.failureWrites.get(id)?.unsubscribe();
    this.failureWrites.delete(id);
    const failure = entry.log.writeFailure;
    return failure === undefined ? [] : encodeWriteFailure(failure);
  }

  /** A failed log counted more lost: its meta hash is told within {@link FAILURE_META_MS}. */
  private failureLater(entry: LocalEntry): void {
    const id = keyOf(entry.log.key);
    if (this.failureWrites.has(id) || this.failures.closed) return;
    const later = (): void => {
      this.failureWrites.delete(id);
      this.ifCurrent(entry.log, (current) => this.writeFailure(current));
    };
    this.failureWrites.set(id, this.scheduler.schedule(later, FAILURE_META_MS));
  }

  /** A stale writer's log takes no more appends (what it took before is still written); reported once per log. */
  private refuse(entry: LocalEntry, currentEpoch: number): void {
    void entry.log.seal();
    if (entry.refused) return;
    entry.refused = true;
    this.emit(new StaleEpochError(entry.log.key.environmentId, entry.log.epoch, currentEpoch));
  }

  /** A meta write of a log this store writes, at its epoch: a stale one refuses the log. */
  private write(entry: LocalEntry, write: Omit<MetaWrite, 'epoch' | 'onStale'>): void {
    void this.metas.write(entry.log.key, { ...write, epoch: entry.log.epoch, onStale: (current) => this.refuse(entry, current) });
  }

  private ifCurrent(log: ContextLog, then: (entry: LocalEntry) => void): void {
    const entry = this.get(log.key);
    if (entry !== undefined && entry.log === log) then(entry);
  }

  private emit(failure: LogStoreFailure): void {
    if (!this.failures.closed) this.failures.next(failure);
  }
}
