/**
 * Every adapter of the two store ports, as their contract suites run them: add an adapter here (a third,
 * Redis) and `state-store.spec.ts` and `log-store.spec.ts` run every rule of its port against it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskLogStore } from '../../src/store/disk/disk-log-store';
import { DiskStateStore } from '../../src/store/disk/disk-state-store';
import { processDir } from '../../src/store/disk/meta-file';
import { fileOf } from '../../src/store/disk/state-files';
import { MemoryLogStore } from '../../src/store/memory/memory-log-store';
import { MemoryStateStore } from '../../src/store/memory/memory-state-store';
import { RedisStateStore } from '../../src/store/redis/redis-state-store';
import type { ProcessKey } from '../../src/store/process-meta';
import Redis from 'ioredis';
import type { SpecRedis } from '../support/redis-server';
import { startRedisServer } from '../support/redis-server';
import { SpyFs } from './disk/log-support';
import { redisLog } from './redis/redis-log-adapter';
import type { LogStoreAdapter } from './log-store.contract';
import type { StateStoreAdapter } from './state-store.contract';

/** A temp dir made on first use in a test and removed by `cleanUp`. */
class TempDir {
  private path: string | undefined;

  async get(prefix: string): Promise<string> {
    this.path ??= await mkdtemp(join(tmpdir(), prefix));
    return this.path;
  }

  async remove(): Promise<void> {
    const path = this.path;
    this.path = undefined;
    if (path !== undefined) await rm(path, { recursive: true, force: true });
  }
}

const stateDir = new TempDir();
const reported: string[] = [];

/** The data dir's state store (`HostState`): durable, with crash points. */
const diskState: StateStoreAdapter = {
  name: 'disk',
  capabilities: { durable: true, crashPoints: true },
  open: async ({ scheduler, maxStarts }) => DiskStateStore.open(await stateDir.get('exec-rx-state-contract-'), { scheduler, log: (line) => reported.push(line), ...(maxStarts === undefined ? {} : { maxStarts }) }),
  damage: async (id) => writeFile(join(await stateDir.get('exec-rx-state-contract-'), 'environments', fileOf(id)), '{"version":1,"id":'),
  reported: () => reported,
  cleanUp: async () => {
    reported.splice(0);
    await stateDir.remove();
  },
};

/** The state store in memory: neither durable nor ever half written. */
const memoryState: StateStoreAdapter = {
  name: 'memory',
  capabilities: { durable: false, crashPoints: false },
  open: ({ scheduler, maxStarts }) => Promise.resolve(new MemoryStateStore({ scheduler, ...(maxStarts === undefined ? {} : { maxStarts }) })),
  cleanUp: () => Promise.resolve(),
};

/** The state adapters' redis-server: started by the first test that opens a Redis store, kept for the spec file. */
let stateRedis: Promise<SpecRedis> | undefined;
/** This test's key prefix (a reopen in one test reads the same keys; the next test starts on fresh ones). */
let statePrefix: string | undefined;

/** Stops the state adapters' redis-server, if a test started it: the spec file calls it in an `afterAll`. */
export async function stopStateRedis(): Promise<void> {
  const server = stateRedis;
  stateRedis = undefined;
  if (server !== undefined) await (await server).stop();
}

/** The state store on a real redis-server: durable (each test a fresh key prefix), each write whole (no crash points). */
const redisState: StateStoreAdapter = {
  name: 'redis',
  capabilities: { durable: true, crashPoints: false },
  open: async ({ scheduler, maxStarts }) => {
    stateRedis ??= startRedisServer();
    const { url } = await stateRedis;
    statePrefix ??= `exec-rx-test-${randomBytes(6).toString('hex')}`;
    const redis = new Redis(url);
    return RedisStateStore.open({ redis, ownsConnection: true, prefix: statePrefix, scheduler, ...(maxStarts === undefined ? {} : { maxStarts }) });
  },
  cleanUp: () => {
    statePrefix = undefined;
    return Promise.resolve();
  },
};

/** The state port's adapters, in the order the suite runs them. */
export const STATE_STORE_ADAPTERS: readonly StateStoreAdapter[] = [diskState, memoryState, redisState];

const logDir = new TempDir();
let logFs = new SpyFs();
/** The disk log store's small bound: 16 KiB per process in 4 KiB segments. */
const DISK_QUOTA = 16 * 1024;
const DISK_SEGMENT = 4 * 1024;

/** Cuts the last 5 bytes of a process's newest segment, as a crash in the middle of its last write would. */
async function tearNewestSegment(dataDir: string, key: ProcessKey): Promise<void> {
  const dir = processDir(dataDir, key);
  const segments = (await readdir(dir)).filter((name) => name.endsWith('.seg')).sort();
  const newest = segments[segments.length - 1];
  if (newest === undefined) throw new Error(`no segment in ${dir}`);
  const path = join(dir, newest);
  const { size } = await stat(path);
  await truncate(path, size - 5);
}

/** The data dir's log store: everything the port names. */
const diskLog: LogStoreAdapter = {
  name: 'disk',
  capabilities: { ownPace: true, durable: true, keepsHead: true, writeFailures: true, figures: true, listsEnded: true },
  bound: { bytes: DISK_QUOTA, slack: DISK_SEGMENT },
  open: async ({ small = false } = {}) => {
    const bounds = small ? { quotaBytes: DISK_QUOTA, segmentBytes: DISK_SEGMENT } : {};
    return DiskLogStore.open({ dataDir: await logDir.get('exec-rx-log-contract-'), totalBytes: 1024 * 1024 * 1024, fs: logFs, ...bounds });
  },
  tear: async (key) => tearNewestSegment(await logDir.get('exec-rx-log-contract-'), key),
  failWrites: () => {
    logFs.failWrites = { path: (path) => path.endsWith('.seg'), code: 'ENOSPC' };
  },
  cleanUp: async () => {
    logFs = new SpyFs();
    await logDir.remove();
  },
};

/** The log store in memory: live readers, the oldest dropped at its bound, nothing kept across a restart. */
const memoryLog: LogStoreAdapter = {
  name: 'memory',
  capabilities: { ownPace: false, durable: false, keepsHead: false, writeFailures: false, figures: false, listsEnded: false },
  bound: { bytes: 16 * 1024, slack: 0 },
  open: ({ small = false } = {}) => Promise.resolve(new MemoryLogStore(small ? { processHistory: { historyEvents: 100_000, historyBytes: 16 * 1024 } } : {})),
  cleanUp: () => Promise.resolve(),
};

/** The log port's adapters, in the order the suite runs them. */
export const LOG_STORE_ADAPTERS: readonly LogStoreAdapter[] = [diskLog, memoryLog, redisLog];
