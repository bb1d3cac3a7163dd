/**
 * What the Redis state store's specs share: one real redis-server for the file (`beforeAll`/`afterAll`), a
 * key prefix of each test's own, and the stores and clients a test opened, closed after it. Call
 * {@link redisStateRig} inside a `describe`.
 */
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { VirtualTimeScheduler } from 'rxjs';
import { RedisStateStore } from '../../../src/store/redis/redis-state-store';
import type { EpochMode } from '../../../src/store/redis/redis-state-options';
import type { SpecRedis } from '../../support/redis-server';
import { startRedisServer } from '../../support/redis-server';

/** A file's redis-server, and what each test opens on it (see the module's doc). */
export interface RedisStateRig {
  /** The redis-server (started in `beforeAll`). */
  readonly server: () => SpecRedis;
  /** This test's key prefix. */
  readonly prefix: () => string;
  /** A client of the spec's own (the test reads Redis through it), closed after the test. */
  readonly client: () => Redis;
  /** A store on this test's prefix, on a connection of its own, as a replica would open it; closed after the test. */
  readonly open: (epochs?: EpochMode, maxStarts?: number) => Promise<RedisStateStore>;
}

/** Registers the file's redis-server and each test's prefix and clean-up (see the module's doc). */
export function redisStateRig(prefixBase: string): RedisStateRig {
  let server: SpecRedis | undefined;
  let prefix = prefixBase;
  const clients: Redis[] = [];
  const stores: RedisStateStore[] = [];
  const started = (): SpecRedis => {
    if (server === undefined) throw new Error('the redis-server is started in beforeAll');
    return server;
  };
  beforeAll(async () => {
    server = await startRedisServer();
  });
  beforeEach(() => {
    prefix = `${prefixBase}-${randomBytes(6).toString('hex')}`;
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    await Promise.all(clients.splice(0).map((redis) => redis.quit()));
  });
  afterAll(async () => {
    await server?.stop();
  });
  return {
    server: started,
    prefix: () => prefix,
    client: () => {
      const redis = new Redis(started().url);
      clients.push(redis);
      return redis;
    },
    open: async (epochs = 'counted', maxStarts) => {
      const options = { redis: new Redis(started().url), ownsConnection: true, prefix, epochs, scheduler: new VirtualTimeScheduler() };
      const store = await RedisStateStore.open({ ...options, ...(maxStarts === undefined ? {} : { maxStarts }) });
      stores.push(store);
      return store;
    },
  };
}
