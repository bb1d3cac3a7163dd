/**
 * The boot marker: a random id under `<prefix>:{global}:boot`, set when Redis has none. Redis that lost
 * its data (restarted empty, failed over to a replica that had not got it) has none, or another one a
 * store set since: a store that remembers the id it saw can tell (`RedisStateStore.datasetLost`).
 */
import { randomBytes } from 'node:crypto';
import { bootKey } from './redis-keys';
import type { RedisClient } from './redis-scripts';

/** A random id (128 bits, hex): a boot marker, or the nonce of a keyed start's write. */
export const randomId = (): string => randomBytes(16).toString('hex');

/** Sets the boot marker when Redis has none (SET NX), and reads back the one Redis holds. */
export async function markBoot(redis: RedisClient, prefix: string): Promise<string> {
  const key = bootKey(prefix);
  const fresh = randomId();
  await redis.set(key, fresh, 'NX');
  return (await redis.get(key)) ?? fresh;
}
