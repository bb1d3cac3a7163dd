/**
 * The Redis keys of the log store. Every key of one environment carries the hash tag
 * `{env:<environmentId>}`, so that they share one Redis Cluster hash slot and one Lua script may read the
 * environment's owner and write a process's log in one step. Only the index of every process
 * (`{global}`) lies outside it: it is written as a second step, never inside a script.
 */
import type { ProcessKey } from '../process-meta';

/** The prefix every key of a store starts with, when none is given. */
export const DEFAULT_REDIS_PREFIX = 'exec-rx';

/** The hash-tagged head of every key of one environment: `${prefix}:{env:${environmentId}}`. */
export const environmentTag = (prefix: string, environmentId: string): string => `${prefix}:{env:${environmentId}}`;

/** The environment's owner: a HASH with `owner` and `epoch` (the state store writes it; the log store reads its epoch). */
export const ownerKey = (prefix: string, environmentId: string): string => `${environmentTag(prefix, environmentId)}:owner`;

/** The keys of one process's log. */
export interface ProcessLogKeys {
  /** The STREAM of its events: entry id `${seq}-0`. */
  readonly stream: string;
  /** The HASH of what the store knows of it (`ProcessMeta`, its last seq, what its quota dropped). */
  readonly meta: string;
  /** The ZSET of what its quota dropped: score a dropped seq, member `${seq}:${output bytes dropped up to it}`. */
  readonly trims: string;
  /** Its environment's owner (see {@link ownerKey}). */
  readonly owner: string;
}

/** The keys of `key`'s log under `prefix`. */
export function processLogKeys(prefix: string, key: ProcessKey): ProcessLogKeys {
  const tag = environmentTag(prefix, key.environmentId);
  return { stream: `${tag}:log:${key.processId}`, meta: `${tag}:meta:${key.processId}`, trims: `${tag}:trims:${key.processId}`, owner: ownerKey(prefix, key.environmentId) };
}

/** The index of every process of the store: a ZSET scored by start time (cross-slot: written apart from the process's keys). */
export const processIndexKey = (prefix: string): string => `${prefix}:{global}:processes`;

/** A process's member in {@link processIndexKey}. */
export const indexMember = (key: ProcessKey): string => JSON.stringify([key.environmentId, key.processId]);

/** The key a member of {@link processIndexKey} names; undefined for a member this store did not write. */
export function keyOfMember(member: string): ProcessKey | undefined {
  try {
    const parsed: unknown = JSON.parse(member);
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') return { environmentId: parsed[0], processId: parsed[1] };
  } catch {
    // not ours
  }
  return undefined;
}
