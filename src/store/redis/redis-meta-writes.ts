/**
 * The log store's writes of what it knows of each process (the meta hash, through the `meta` script: at
 * the writer's epoch or unchecked, with the keys' retention), queued per process so that `metaWritten`
 * waits for the last one (commands on one connection run in order: the last done means all are); and the
 * index of every process (`list()`), a ZSET in another slot, read and written apart.
 */
import type Redis from 'ioredis';
import type { LogWriteOperation } from '../../errors';
import type { ProcessKey, ProcessMeta } from '../process-meta';
import { keyOf, listOrder, stillRunning } from '../process-meta';
import { decodeMeta } from './redis-log-codec';
import type { ProcessLogKeys } from './redis-log-keys';
import { indexMember, keyOfMember, ownerKey, processIndexKey, processLogKeys } from './redis-log-keys';
import { asHash } from './redis-log-read';
import type { LogScripts } from './redis-log-scripts';

/** A meta write's mode and retention (see `LogScripts.meta`). */
export interface MetaWrite {
  /** The writer's epoch, or -1: unchecked. */
  readonly epoch: number;
  /** `create` deletes what the keys held first; `update` writes only a known process; `restore` only one Redis lost. */
  readonly mode: 'create' | 'update' | 'restore';
  /** > 0: the keys expire then; < 0: they no longer expire; 0: unchanged. */
  readonly ttlMs: number;
  /** The hash's fields and values. */
  readonly fields: readonly string[];
  /** The script refused the epoch: the owner's is `currentEpoch`. */
  readonly onStale?: (currentEpoch: number) => void;
}

/** The meta writes and the index of one store (see the module's doc). */
export class MetaWrites {
  private readonly pending = new Map<string, Promise<void>>();
  /** What this store wrote of the meta hash of each process whose log it writes (fields by name), to write it back if Redis loses it. */
  private readonly known = new Map<string, Map<string, string>>();

  constructor(
    private readonly redis: Redis,
    private readonly scripts: LogScripts,
    private readonly prefix: string,
    /** A write Redis refused. */ private readonly report: (processId: string, operation: LogWriteOperation, error: unknown) => void,
    /** Whether this store writes the log of a process (`keyOf`): only those are remembered, while it does. */ private readonly local: (id: string) => boolean,
  ) {}

  /** One meta script call, queued behind the process's others; resolves when done. Never rejects (a failure is reported). */
  write(key: ProcessKey, write: MetaWrite): Promise<void> {
    const id = keyOf(key);
    this.remember(id, write);
    const keys = this.keysOf(key);
    const written = this.scripts.meta([keys.meta, keys.owner, keys.stream, keys.trims], write.epoch, write.mode, write.ttlMs, write.fields).then(
      (result) => {
        if (result.outcome === 'stale') write.onStale?.(result.currentEpoch);
      },
      (error: unknown) => this.report(key.processId, 'metadata', error),
    );
    return this.queued(id, written);
  }

  /**
   * Writes back a process's meta hash as this store last wrote it, with `fields` over it, when Redis lost
   * it (restarted empty), at `epoch`; and its index entry. Resolves when done; never rejects.
   */
  async restore(key: ProcessKey, epoch: number, fields: readonly string[]): Promise<void> {
    const kept = this.known.get(keyOf(key));
    if (kept === undefined) return;
    // `restore` sets only the fields the hash lacks (the appends since the loss made its counters): the first of a name wins.
    await this.write(key, { epoch, mode: 'restore', ttlMs: 0, fields: [...fields, ...[...kept].flat()] });
    this.index(key, Number(kept.get('startedAt') ?? '0') || 0);
  }

  /** What a process taken back had in its meta hash, with `fields` over it: written back, with what this store writes next, if Redis loses it. */
  seed(key: ProcessKey, hash: Readonly<Record<string, string>>, fields: readonly string[]): void {
    const kept = new Map(Object.entries(hash));
    for (let i = 0; i + 1 < fields.length; i += 2) kept.set(fields[i] ?? '', fields[i + 1] ?? '');
    this.known.set(keyOf(key), kept);
  }

  /** Lets go of what it remembered of a process (its log is no longer this store's). */
  forget(key: ProcessKey): void {
    this.known.delete(keyOf(key));
  }

  private remember(id: string, write: MetaWrite): void {
    if (!this.local(id)) return;
    const fields = write.mode === 'create' ? new Map<string, string>() : (this.known.get(id) ?? new Map<string, string>());
    for (let i = 0; i + 1 < write.fields.length; i += 2) fields.set(write.fields[i] ?? '', write.fields[i + 1] ?? '');
    this.known.set(id, fields);
  }

  /** Resolves once the process's meta writes so far are done. Never rejects. */
  written(key: ProcessKey): Promise<void> {
    return this.pending.get(keyOf(key)) ?? Promise.resolve();
  }

  /** Resolves once every meta write so far is done. Never rejects. */
  async all(): Promise<void> {
    await Promise.all([...this.pending.values()]);
  }

  /** Adds a process to the index (another slot: a second step after its meta hash). Never rejects. */
  index(key: ProcessKey, startedAt: number): void {
    this.redis.zadd(processIndexKey(this.prefix), startedAt, indexMember(key)).then(
      () => undefined,
      (error: unknown) => this.report(key.processId, 'metadata', error),
    );
  }

  /**
   * Deletes the keys of a process that never ran (its start was refused), then its index entry: only while
   * its meta hash names `epoch` as its writer's and no newer owner holds the environment (else they stay,
   * and a take-back accounts for the process). Queued behind its other meta writes; never rejects.
   */
  drop(key: ProcessKey, epoch: number): Promise<void> {
    const id = keyOf(key);
    this.known.delete(id);
    const keys = this.keysOf(key);
    const dropped = this.scripts.meta([keys.meta, keys.owner, keys.stream, keys.trims], epoch, 'drop', 0, []).then(
      async (result) => {
        if (result.outcome === 'written') await this.redis.zrem(processIndexKey(this.prefix), indexMember(key));
      },
    ).catch((error: unknown) => this.report(key.processId, 'remove', error));
    return this.queued(id, dropped);
  }

  /** `call` as the process's last meta call (what `written` waits for), until it is done. */
  private queued(id: string, call: Promise<void>): Promise<void> {
    this.pending.set(id, call);
    void call.then(() => {
      if (this.pending.get(id) === call) this.pending.delete(id);
    });
    return call;
  }

  /** Deletes a process's keys, then its index entry. Never rejects. */
  async remove(key: ProcessKey): Promise<void> {
    const keys = this.keysOf(key);
    try {
      await this.redis.del(keys.stream, keys.meta, keys.trims);
      await this.redis.zrem(processIndexKey(this.prefix), indexMember(key));
    } catch (error: unknown) {
      this.report(key.processId, 'remove', error);
    }
  }

  /** Every process of the index whose meta hash is still there (the expired ones leave the index here). */
  async list(): Promise<ProcessMeta[]> {
    const index = processIndexKey(this.prefix);
    const members = (await this.redis.zrange(index, 0, -1)).map((member) => ({ member, key: keyOfMember(member) }));
    const pipeline = this.redis.pipeline();
    for (const { key } of members) if (key !== undefined) pipeline.hgetall(this.keysOf(key).meta);
    const replies = (await pipeline.exec()) ?? [];
    const found: ProcessMeta[] = [];
    const gone: string[] = [];
    let at = 0;
    for (const { member, key } of members) {
      if (key === undefined) continue;
      const reply = replies[at];
      at += 1;
      const meta = reply !== undefined && reply[0] === null ? decodeMeta(key, asHash(reply[1])) : undefined;
      if (meta === undefined) gone.push(member);
      else found.push(meta);
    }
    if (gone.length > 0) await this.redis.zrem(index, ...gone).catch(() => undefined);
    return found.sort(listOrder);
  }

  /**
   * Processes of `environmentId` to take back: `unknown` (their host stopped), `taken` (taken back and not
   * continued), or still `running`/`exited` by a writer whose epoch is below the environment's owner's now
   * (their host died without a word, or was fenced: this store's own generation of before too); never
   * released ones.
   */
  async adoptable(environmentId: string, taken: (meta: ProcessMeta) => boolean): Promise<ProcessMeta[]> {
    const metas = (await this.list()).filter((meta) => meta.environmentId === environmentId && !meta.released);
    const owner = Number(await this.redis.hget(ownerKey(this.prefix, environmentId), 'epoch')) || 0;
    const found: ProcessMeta[] = [];
    for (const meta of metas) {
      if (meta.state === 'unknown' || taken(meta)) found.push(meta);
      else if (stillRunning(meta) && (Number(await this.redis.hget(this.keysOf(meta).meta, 'epoch')) || 0) < owner) found.push(meta);
    }
    return found;
  }

  private keysOf(key: ProcessKey): ProcessLogKeys {
    return processLogKeys(this.prefix, key);
  }
}
