/**
 * The keyed starts' index on Redis. A start's record is in its environment's hash tag (so its writes are
 * fenced by the environment's epoch in one script); the index that bounds them, across the store, is in
 * the global tag: a ZSET of digests scored by a counter (the order recorded, even within one ms) and a
 * HASH digest -> `"<nonce> <environmentId>"` (where the record is, and which write made it). The index
 * is written in a second step, after the record (two hash slots: no one script may write both); the nonce
 * keeps a record recorded again from being deleted by the eviction of its older index entry.
 */
import type { IndexedStart } from './redis-records';
import { indexedStartOf, indexEntry } from './redis-records';
import { startEnvironmentsKey, startIndexKey, startKey, startSequenceKey } from './redis-keys';
import type { RedisClient } from './redis-scripts';
import { DROP_START, INDEX_START, UNINDEX_START } from './redis-scripts';

/** Where the record of the start `digest` is, if the index holds it. */
export async function indexedStart(redis: RedisClient, prefix: string, digest: string): Promise<IndexedStart | undefined> {
  return indexedStartOf(await redis.hget(startEnvironmentsKey(prefix), digest));
}

/** Indexes the start `digest` (recorded by write `nonce`) as the newest, and deletes the records of the oldest past `maxStarts`. */
export async function indexStart(redis: RedisClient, prefix: string, digest: string, environmentId: string, nonce: string, maxStarts: number): Promise<void> {
  const index = [startIndexKey(prefix), startEnvironmentsKey(prefix), startSequenceKey(prefix)];
  const reply = await INDEX_START.run(redis, index, [digest, indexEntry(nonce, environmentId), maxStarts]);
  await Promise.all(droppedStarts(reply).map(([old, indexed]) => DROP_START.run(redis, [startKey(prefix, indexed.environmentId, old)], [indexed.nonce])));
}

/** Drops the start `digest` from the index, if its entry is still the one of write `nonce`. */
export async function unindexStart(redis: RedisClient, prefix: string, digest: string, environmentId: string, nonce: string): Promise<void> {
  await UNINDEX_START.run(redis, [startIndexKey(prefix), startEnvironmentsKey(prefix)], [digest, indexEntry(nonce, environmentId)]);
}

/** INDEX_START's reply: each dropped digest with where its record is. */
function droppedStarts(reply: unknown): [string, IndexedStart][] {
  if (!Array.isArray(reply)) return [];
  const dropped: [string, IndexedStart][] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const digest: unknown = reply[i];
    const entry: unknown = reply[i + 1];
    const indexed = typeof entry === 'string' ? indexedStartOf(entry) : undefined;
    if (typeof digest === 'string' && indexed !== undefined) dropped.push([digest, indexed]);
  }
  return dropped;
}
