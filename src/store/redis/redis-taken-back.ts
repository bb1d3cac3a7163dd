/**
 * The processes a Redis log store took back (`LogStore.adopt`) that no history continued yet: where each
 * one's log goes on (its counters at the take-back) and at which epoch. A take-back that failed leaves them
 * here, adoptable again for the executor's next socket; the next history of the process continues it.
 */
import type Redis from 'ioredis';
import type { ProcessKey } from '../process-meta';
import { keyOf } from '../process-meta';
import type { RedisLogStart } from './redis-log-context';
import { decodeCounters, decodeMeta, takenBackFields } from './redis-log-codec';
import type { ProcessLogKeys } from './redis-log-keys';
import type { ReadBound } from './redis-log-read';
import { readTakenBack } from './redis-log-read';
import type { LocalLogs } from './redis-local-logs';

/** One process taken back and not continued yet. */
interface TakenBackEntry {
  readonly key: ProcessKey;
  readonly start: RedisLogStart;
  epoch: number;
}

/** What the taken-back processes work with (their store's parts). */
export interface TakenBackParts {
  readonly redis: Redis;
  readonly locals: LocalLogs;
  readonly keysOf: (key: ProcessKey) => ProcessLogKeys;
  /** Bounds the take-back's reads (an unreachable Redis fails it, never hangs it). */
  readonly bound: ReadBound;
  /** This store reads the process from Redis no more (it writes it now). */
  readonly dropRemote: (id: string) => void;
}

/** The processes taken back and not continued (see the module's doc). */
export class TakenBackLogs {
  private readonly entries = new Map<string, TakenBackEntry>();

  constructor(private readonly parts: TakenBackParts) {}

  /** Whether `key` was taken back and not continued. */
  has(key: ProcessKey): boolean {
    return this.entries.has(keyOf(key));
  }

  /** Where the log of `key` goes on, once: a history continues it now (undefined for one not taken back). */
  take(key: ProcessKey): RedisLogStart | undefined {
    const start = this.entries.get(keyOf(key))?.start;
    this.entries.delete(keyOf(key));
    return start;
  }

  /** Forgets `key` (lost, or removed). */
  forget(key: ProcessKey): void {
    this.entries.delete(keyOf(key));
  }

  /** Every process taken back and not continued. */
  keys(): ProcessKey[] {
    return [...this.entries.values()].map(({ key }) => key);
  }

  /**
   * Takes the log of `key` back at `epoch`: its last seq, read from Redis within the bound (rejects with
   * OutputLogReadError: ETIMEDOUT or Redis's refusal); undefined when Redis holds no such process. Once
   * taken, the log is `running` again at `epoch` and no longer expires; a log this store wrote of it before
   * takes nothing more. Taken again (the attempt before failed): it goes on at the newer epoch.
   */
  async adopt(key: ProcessKey, epoch: number): Promise<number | undefined> {
    const { redis, locals } = this.parts;
    const id = keyOf(key);
    locals.fence(key.environmentId, epoch);
    const taken = this.entries.get(id);
    if (taken !== undefined) {
      taken.epoch = Math.max(taken.epoch, epoch);
      void locals.metas.write(key, { epoch: taken.epoch, mode: 'update', ttlMs: -1, fields: ['epoch', String(taken.epoch)] });
      return taken.start.lastSeq;
    }
    const [hash, storedEvents] = await readTakenBack(redis, this.parts.keysOf(key), key.processId, this.parts.bound);
    if (decodeMeta(key, hash) === undefined) return undefined;
    const { lastSeq, storedBytes, trimmedTo } = decodeCounters(hash);
    locals.get(key)?.log.removed();
    locals.entries.delete(id);
    this.parts.dropRemote(id);
    this.entries.set(id, { key, start: { lastSeq, storedBytes, storedEvents, trimmedTo }, epoch });
    const running = takenBackFields(epoch);
    locals.metas.seed(key, hash, running);
    void locals.metas.write(key, { epoch, mode: 'update', ttlMs: -1, fields: running });
    return lastSeq;
  }
}
