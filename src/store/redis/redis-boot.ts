/**
 * The boot marker: a random id under `<prefix>:{global}:boot`, set when Redis has none. Redis that lost
 * its data (restarted empty, failed over to a replica that had not got it) has none, or another one a
 * store set since: a store that remembers the id it saw can tell (`RedisStateStore.datasetLost`).
 */
import { randomBytes } from 'node:crypto';
import { bootKey, lostKey } from './redis-keys';
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

/**
 * What a store knows of Redis losing its data: the boot marker it saw last ({@link lost}), and the loss a
 * replica found and noted for a while (`<prefix>:{global}:lost`, PX: {@link note}, {@link noted}).
 */
export class RedisBoot {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** The boot marker this store saw at open, or at its last {@link lost} that said true. */
    private seen: string,
  ) {}

  /** The boot marker Redis holds now, set first when it has none. */
  marker(): Promise<string> {
    return markBoot(this.redis, this.prefix);
  }

  /**
   * Whether Redis lost its data since this store last looked: the boot marker is gone, or another than
   * the one seen. When it did, the marker is made again and remembered, so the next call answers false
   * until Redis loses its data again.
   */
  async lost(): Promise<boolean> {
    const now = await this.redis.get(bootKey(this.prefix));
    if (now !== null && now === this.seen) return false;
    this.seen = await markBoot(this.redis, this.prefix);
    return true;
  }

  /** Notes, for `forMs` (a PX ttl), that a replica found the data lost at `at`: {@link noted} says so meanwhile, to every replica. */
  async note(at: number, forMs: number): Promise<void> {
    await this.redis.set(lostKey(this.prefix), String(at), 'PX', Math.max(1, Math.ceil(forMs)));
  }

  /** Whether a loss was noted ({@link note}) and its time has not run out. */
  async noted(): Promise<boolean> {
    return (await this.redis.exists(lostKey(this.prefix))) === 1;
  }
}
