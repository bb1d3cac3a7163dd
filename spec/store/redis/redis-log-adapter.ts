/**
 * The Redis log store under the log port's contract (`../adapters.ts` lists it): one redis-server per
 * spec file, started on first use and stopped by the leak check's tracker (`trackExecutors`), a fresh key
 * prefix per test (a store reopened within a test reads what it wrote), every connection of a test quit
 * by its `cleanUp`.
 */
import Redis from 'ioredis';
import { RedisLogStore } from '../../../src/store/redis/redis-log-store';
import { processLogKeys } from '../../../src/store/redis/redis-log-keys';
import type { ProcessKey } from '../../../src/store/process-meta';
import type { SpecRedis } from '../../support/redis-server';
import { startRedisServer } from '../../support/redis-server';
import { trackExecutors } from '../../support/resources';
import type { LogStoreAdapter } from '../log-store.contract';

const tracker = trackExecutors();
let server: Promise<SpecRedis> | undefined;
const connections: Redis[] = [];
const stores: RedisLogStore[] = [];
let test = 0;
const prefix = (): string => `exec-rx-contract-${test}`;

/** This spec file's redis-server, started on first use (stopped with the file's leak check). */
function redisServer(): Promise<SpecRedis> {
  server ??= startRedisServer().then((started) => {
    tracker.track({
      stop: async () => {
        await quitAll();
        await started.stop();
      },
    });
    return started;
  });
  return server;
}

async function quitAll(): Promise<void> {
  await Promise.all(connections.splice(0).map((connection) => connection.quit().catch(() => connection.disconnect())));
}

/** A connection to this file's server, quit by `cleanUp`; `ready`: connected before it is returned. */
async function connection(ready: boolean): Promise<Redis> {
  const { url } = await redisServer();
  const made = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: null });
  made.on('error', () => undefined);
  connections.push(made);
  if (ready) await made.connect();
  return made;
}

/**
 * Deletes the newest entry of a process's stream, as a failover to a replica that had not yet received
 * the last write would (Redis replicates asynchronously): its last-id, `lastSeq` and bytes go back with it.
 */
async function tearNewest(key: ProcessKey): Promise<void> {
  const redis = await connection(true);
  const keys = processLogKeys(prefix(), key);
  const [newest, before] = await redis.xrevrangeBuffer(keys.stream, '+', '-', 'COUNT', 2);
  if (newest === undefined) throw new Error(`no entry in ${keys.stream}`);
  const fields = newest[1];
  const bytes = fields.findIndex((field, i) => i % 2 === 0 && field.toString() === 'b');
  const size = bytes < 0 ? 0 : (fields[bytes + 1]?.byteLength ?? 0);
  const previous = before === undefined ? '0-0' : before[0].toString();
  await redis.xdel(keys.stream, newest[0]);
  await redis.call('XSETID', keys.stream, previous);
  await redis.hset(keys.meta, 'lastSeq', previous.split('-')[0] ?? '0');
  await redis.hincrby(keys.meta, 'storedBytes', -size);
}

/** The Redis log store: paced, durable, fallible (an unreachable Redis past a 16-byte buffer), the oldest dropped at its quota. */
export const redisLog: LogStoreAdapter = {
  name: 'redis',
  capabilities: { ownPace: true, durable: true, keepsHead: false, writeFailures: true, figures: false, listsEnded: true },
  bound: { bytes: 16 * 1024, slack: 0 },
  open: async ({ small = false } = {}) => {
    const redis = await connection(true);
    const store = await RedisLogStore.open({
      redis,
      subscriber: () => {
        const made = new Redis(redis.options);
        made.on('error', () => undefined);
        return made;
      },
      prefix: prefix(),
      // One line past it fails a log once Redis is unreachable (the contract's `failWrites`).
      bufferBytes: 16,
      ...(small ? { quotaBytes: 16 * 1024 } : {}),
    });
    stores.push(store);
    return store;
  },
  tear: tearNewest,
  failWrites: () => {
    for (const store of stores) store.simulateOutage(true);
  },
  cleanUp: async () => {
    stores.splice(0);
    await quitAll();
    test += 1;
  },
};
