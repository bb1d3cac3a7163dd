/**
 * Where each replica takes forwarded calls, in Redis (`ReplicaDirectory`, issue 39): one STRING per
 * replica, `<prefix>:{global}:replica:<owner>`, its internal url, with a PX ttl its renewals push on.
 */
import type { ReplicaDirectory } from '../cluster-state';
import type { RedisClient } from './redis-scripts';
import { replicaKey } from './redis-keys';
import type { StoreRun } from './redis-environment-states';

/** The replicas' advertisements on one Redis (see the module's doc). Holds no timer and no connection of its own. */
export class RedisReplicas implements ReplicaDirectory {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** How a call runs (the state store's: counted, and its errors mapped to StoreUnavailableError). */
    private readonly run: StoreRun,
  ) {}

  advertise(owner: string, url: string, ttlMs: number): Promise<void> {
    return this.run(async () => {
      if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new TypeError(`an advertisement lasts a positive integer of ms, not ${String(ttlMs)}`);
      await this.redis.set(replicaKey(this.prefix, owner), url, 'PX', ttlMs);
    });
  }

  url(owner: string): Promise<string | undefined> {
    return this.run(async () => (await this.redis.get(replicaKey(this.prefix, owner))) ?? undefined);
  }
}
