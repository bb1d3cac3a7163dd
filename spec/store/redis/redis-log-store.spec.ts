/**
 * The Redis log store beyond the port's contract (`../log-store.contract.ts` runs that): its batches of
 * 64 events per script call, the script's no-op for a seq already logged, its own fencing by the owner
 * hash, raw bytes, an unreachable Redis (a paused server) held in memory up to the buffer and the typed
 * failure past it, recorded for readers on every store, a flush bounded while Redis does not answer,
 * backpressure, a log another store writes followed, expiry after a release, and a script that gives
 * nothing usable (not defined on the connection, a reply of the wrong shape): STORE_SCRIPT_FAILED, and a log
 * that fails at once.
 */
import { filter, firstValueFrom, Subject } from 'rxjs';
import Redis from 'ioredis';
import { OutputLogError, StaleEpochError, StoreScriptError } from '../../../src/errors';
import type { LogEvent } from '../../../src/store/log-events';
import type { LogPressure, LogStoreFailure, PacedLogReader } from '../../../src/store/log-store';
import type { ProcessKey } from '../../../src/store/process-meta';
import { encodeRecord } from '../../../src/store/redis/redis-log-codec';
import { ownerKey, processLogKeys } from '../../../src/store/redis/redis-log-keys';
import type { RedisLogStoreOptions } from '../../../src/store/redis/redis-log-store';
import { RedisLogStore } from '../../../src/store/redis/redis-log-store';
import type { SpecRedis } from '../../support/redis-server';
import { startRedisServer } from '../../support/redis-server';
import { trackExecutors } from '../../support/resources';
import { closed, outputBytes } from '../../exec/event-builders';
import { VirtualClock } from '../../support/virtual-time';

const tracker = trackExecutors();
let server: SpecRedis;
let test = 0;
const ENV = 'env-redis';
const key = (processId: string): ProcessKey => ({ environmentId: ENV, processId });
const chunk = (seq: number, bytes = 100): Uint8Array => new Uint8Array(bytes).fill(seq & 0xff);
/** Resolves once the store counts Redis as unreachable (a call it sent went unanswered past `stallMs`). */
const unreachable = (store: RedisLogStore): Promise<boolean> => firstValueFrom(store.reachable$.pipe(filter((up) => !up)));

beforeAll(async () => {
  server = tracker.track(await startRedisServer());
});

afterEach(() => {
  server.resume(); // a test that failed while the server was paused leaves it running for the next
  test += 1;
});

/** A connection to the spec's server, quit at the end of the file. */
async function connect(): Promise<Redis> {
  const redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  tracker.track({ stop: async () => void (await redis.quit().catch(() => redis.disconnect())) });
  await redis.connect();
  return redis;
}

/** A store on a fresh connection and this test's prefix, closed at the end of the file; its failures and pressure collected. */
async function open(options: Partial<RedisLogStoreOptions> = {}): Promise<{ store: RedisLogStore; redis: Redis; failures: LogStoreFailure[]; pressure: LogPressure[] }> {
  const redis = await connect();
  const store = await RedisLogStore.open({ redis, prefix: `spec-${test}`, subscriber: () => new Redis(redis.options), ...options });
  tracker.track({ close: () => store.close() });
  const failures: LogStoreFailure[] = [];
  const pressure: LogPressure[] = [];
  store.failures$.subscribe((failure) => failures.push(failure));
  store.pressure$.subscribe((change) => pressure.push(change));
  return { store, redis, failures, pressure };
}

/** Everything the reader holds after `afterSeq`. */
async function readAll(reader: PacedLogReader, afterSeq = 0): Promise<LogEvent[]> {
  const events: LogEvent[] = [];
  let cursor = afterSeq;
  for (;;) {
    const read = await reader.read(cursor, 64 * 1024);
    events.push(...read.events);
    cursor = read.lastSeq;
    if (read.events.length === 0 || read.ended) return events;
  }
}

async function readerOf(store: RedisLogStore, processId: string): Promise<PacedLogReader> {
  const reader = await store.openReader(key(processId));
  if (reader === undefined || reader.pace !== 'own') throw new Error(`no paced log of ${processId}`);
  return reader;
}

const seqs = (events: readonly LogEvent[]): unknown[] => events.map((event) => ('seq' in event ? event.seq : event.type === 'truncated' ? [event.reason, event.fromSeq, event.toSeq] : event.error.code));
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_v, i) => from + i);

describe('RedisLogStore', () => {
  it('writes a burst in batches of 64 events per script call, with their raw bytes', async () => {
    const { store } = await open();
    const history = store.histories(ENV, { epoch: 1 })('p-batch', { argv: ['yes'], tty: false });
    const before = store.scripts.calls;
    const every = new Uint8Array(256).map((_v, i) => i);
    history.append(outputBytes(1, every));
    for (let seq = 2; seq <= 200; seq += 1) history.append(outputBytes(seq, chunk(seq)));
    await store.flush();
    expect(store.scripts.calls - before).toBe(4); // 64 + 64 + 64 + 8
    const events = await readAll(await readerOf(store, 'p-batch'));
    expect(seqs(events)).toEqual(range(1, 200));
    const first = events[0];
    expect(first?.type === 'output' ? Buffer.from(first.chunk).equals(Buffer.from(every)) : first).toBe(true);
  });

  it('makes a seq at or below the last one logged a no-op: a resent or overlapping batch never doubles', async () => {
    const { store, redis } = await open();
    store.histories(ENV, { epoch: 1 })('p-overlap', { argv: ['x'], tty: false });
    await store.flush();
    const keys = processLogKeys(`spec-${test}`, key('p-overlap'));
    const batch = (from: number, to: number): (string | Buffer)[] => range(from, to).flatMap((seq) => encodeRecord({ type: 'output', seq, stream: 'stdout', chunk: chunk(seq, 10), time: 1 }));
    const append = (from: number, to: number): Promise<unknown> => store.scripts.append([keys.stream, keys.meta, keys.owner, keys.trims], { epoch: 1, name: 'spec' }, 0, to - from + 1, batch(from, to));
    await append(1, 3);
    expect(await append(2, 5)).toMatchObject({ accepted: true, lastSeq: 5, storedEvents: 5, storedBytes: 50 });
    expect(await append(1, 5)).toMatchObject({ lastSeq: 5, storedEvents: 5, storedBytes: 50 });
    expect(await redis.xlen(keys.stream)).toBe(5);
    // Read as another host reads it (this store's own log took none of these appends).
    const other = await open();
    expect(seqs(await readAll(await readerOf(other.store, 'p-overlap')))).toEqual(range(1, 5));
  });

  it('drops the oldest entries past its quota, and a reader the quota overtook gets the exact bytes of what it missed', async () => {
    const { store } = await open({ quotaBytes: 1000 });
    const history = store.histories(ENV, { epoch: 1 })('p-quota', { argv: ['yes'], tty: false });
    for (let seq = 1; seq <= 10; seq += 1) history.append(outputBytes(seq, chunk(seq)));
    await store.flush();
    const reader = await readerOf(store, 'p-quota');
    expect(seqs((await reader.read(0, 250)).events)).toEqual([1, 2, 3]);
    for (let seq = 11; seq <= 15; seq += 1) history.append(outputBytes(seq, chunk(seq)));
    await store.flush(); // one script call drops 1..5
    expect(history.retainedBytes).toBe(1000);
    const missed = (await reader.read(3, 1 << 20)).events[0];
    expect(missed).toMatchObject({ type: 'truncated', reason: 'quota', fromSeq: 4, toSeq: 5, droppedBytes: 200 });
    expect((await reader.read(0, 1 << 20)).events[0]).toMatchObject({ type: 'truncated', reason: 'quota', fromSeq: 1, toSeq: 5, droppedBytes: 500 });
    expect(seqs(await readAll(reader, 5))).toEqual(range(6, 15));
  });

  it('is refused by its script once the owner hash holds a newer epoch: nothing more is written, one StaleEpochError', async () => {
    const { store, redis, failures } = await open();
    const history = store.histories(ENV, { epoch: 1 })('p-owned', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    await store.flush();
    await redis.hset(ownerKey(`spec-${test}`, ENV), 'owner', 'host-b', 'epoch', '5');
    history.append(outputBytes(2, chunk(2)));
    history.append(outputBytes(3, chunk(3)));
    await store.flush();
    history.append(outputBytes(4, chunk(4)));
    await store.flush();
    expect(failures.map((failure) => (failure instanceof StaleEpochError ? [failure.epoch, failure.currentEpoch] : failure.code))).toEqual([[1, 5]]);
    // Its readers read Redis now, where the new owner goes on: the log has not ended.
    const read = await (await readerOf(store, 'p-owned')).read(0, 1 << 20);
    expect({ seqs: seqs(read.events), ended: read.ended }).toEqual({ seqs: [1], ended: false });
  });

  it('reads a log it wrote at an epoch another store took over from Redis, where the new writer goes on to the end', async () => {
    const a = await open();
    const b = await open();
    // a's process stopped with a: its output went to b alone. a's manager let go of it (its log sealed, empty).
    a.store.histories(ENV, { epoch: 1 })('p-moved', { argv: ['x'], tty: false });
    await a.store.flush();
    await a.store.markFailed(key('p-moved'));
    await a.redis.hset(ownerKey(`spec-${test}`, ENV), 'owner', 'host-b', 'epoch', '2');
    expect(await b.store.adopt(key('p-moved'), 2)).toBe(0);
    const moved = b.store.histories(ENV, { epoch: 2 })('p-moved', { argv: ['x'], tty: false });
    for (let seq = 1; seq <= 6; seq += 1) moved.append(outputBytes(seq, chunk(seq)));
    moved.append(closed(7));
    await b.store.flush();
    expect(seqs(await readAll(await readerOf(a.store, 'p-moved')))).toEqual(range(1, 7));
  });

  it('cannot release or fail a process under the store that took it over: those writes carry its writer\'s epoch', async () => {
    const a = await open();
    const b = await open();
    const history = a.store.histories(ENV, { epoch: 1 })('p-kept', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    await a.store.flush();
    await a.redis.hset(ownerKey(`spec-${test}`, ENV), 'owner', 'host-b', 'epoch', '2');
    expect(await b.store.adopt(key('p-kept'), 2)).toBe(1);
    b.store.histories(ENV, { epoch: 2 })('p-kept', { argv: ['x'], tty: false });
    await b.store.flush();
    // a lets go of the environment: its manager closes, failing and releasing what it held.
    await a.store.markFailed(key('p-kept'));
    history.release();
    await a.store.flush();
    expect(await b.store.meta(key('p-kept'))).toMatchObject({ state: 'running', released: false });
    expect(await b.store.adoptable(ENV)).toEqual([]);
  });

  it('cannot discard a process once another store owns its environment: its keys stay, for the take-back to account for', async () => {
    const a = await open();
    const b = await open();
    const history = a.store.histories(ENV, { epoch: 1 })('p-refused-late', { argv: ['x'], tty: false });
    await a.store.metaWritten(key('p-refused-late'));
    await a.redis.hset(ownerKey(`spec-${test}`, ENV), 'owner', 'host-b', 'epoch', '2');
    if (history.discard === undefined) throw new Error('a history of the Redis store can be discarded');
    history.discard();
    await a.store.metaWritten(key('p-refused-late'));
    expect(await b.store.meta(key('p-refused-late'))).toMatchObject({ state: 'running', released: false });
    expect((await b.store.adoptable(ENV)).map((meta) => meta.processId)).toEqual(['p-refused-late']);
  });

  it('gives readers an evicted marker and the closed event for what Redis lost of a log whose metadata it kept', async () => {
    const a = await open();
    const b = await open();
    const history = a.store.histories(ENV, { epoch: 1 })('p-emptied', { argv: ['x'], tty: false });
    for (let seq = 1; seq <= 3; seq += 1) history.append(outputBytes(seq, chunk(seq)));
    history.append(closed(4));
    await a.store.flush();
    // Redis restarted empty and the owner wrote its metadata back: the stream holds nothing of it.
    await a.redis.del(processLogKeys(`spec-${test}`, key('p-emptied')).stream);
    const want = [['evicted', 1, 3], 4];
    for (const store of [a.store, b.store]) {
      const read = await (await readerOf(store, 'p-emptied')).read(0, 1 << 20);
      expect({ seqs: seqs(read.events), ended: read.ended }).toEqual({ seqs: want, ended: true });
    }
    expect((await (await readerOf(b.store, 'p-emptied')).read(2, 1 << 20)).events).toMatchObject([{ type: 'truncated', reason: 'evicted', fromSeq: 3, toSeq: 3 }, { type: 'closed', seq: 4 }]);
  });

  it('writes back, after Redis lost its data, only the logs of the environments its host still owns at their epoch', async () => {
    const { store, redis } = await open();
    const owned = store.histories(ENV, { epoch: 3 })('p-owned-back', { argv: ['x'], tty: false });
    const other = store.histories('env-let-go', { epoch: 2 })('p-let-go', { argv: ['x'], tty: false });
    owned.append(outputBytes(1, chunk(1)));
    other.append(outputBytes(1, chunk(1)));
    await store.flush();
    await redis.del(...(await redis.keys(`spec-${test}:*`)));
    // The host owns ENV at epoch 3 still; env-let-go it let go of (another replica writes it back).
    expect(await store.rewrite(new Map([[ENV, 3]]))).toBe(1);
    await store.flush();
    expect(await store.meta(key('p-owned-back'))).toMatchObject({ state: 'running' });
    expect(await store.meta({ environmentId: 'env-let-go', processId: 'p-let-go' })).toBeUndefined();
    expect(await store.rewrite(new Map([[ENV, 4]]))).toBe(0);
  });

  it("stamps each entry with its writer's name and epoch: who wrote what, across a take-over", async () => {
    const a = await open();
    const b = await open();
    const first = a.store.histories(ENV, { epoch: 1, writer: 'replica-a' })('p-stamped', { argv: ['x'], tty: false });
    for (let seq = 1; seq <= 2; seq += 1) first.append(outputBytes(seq, chunk(seq)));
    await a.store.flush();
    await a.redis.hset(ownerKey(`spec-${test}`, ENV), 'owner', 'replica-b', 'epoch', '2');
    expect(await b.store.adopt(key('p-stamped'), 2)).toBe(2);
    const moved = b.store.histories(ENV, { epoch: 2, writer: 'replica-b' })('p-stamped', { argv: ['x'], tty: false });
    moved.append(outputBytes(3, chunk(3)));
    moved.append(closed(4));
    await b.store.flush();
    const entries = await a.redis.xrange(processLogKeys(`spec-${test}`, key('p-stamped')).stream, '-', '+');
    const stamps = entries.map(([id, fields]) => {
      const field = (name: string): string | undefined => fields.find((value, at) => at % 2 === 1 && fields[at - 1] === name);
      return [id, field('w'), field('p')];
    });
    expect(stamps).toEqual([
      ['1-0', 'replica-a', '1'],
      ['2-0', 'replica-a', '1'],
      ['3-0', 'replica-b', '2'],
      ['4-0', 'replica-b', '2'],
    ]);
  });

  it('holds appends in memory while Redis is paused, is unready meanwhile, and writes them all when it answers again', async () => {
    const { store, failures } = await open({ stallMs: 100, bufferBytes: 64 * 1024 });
    const history = store.histories(ENV, { epoch: 1 })('p-paused', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    await store.flush();
    server.pause();
    for (let seq = 2; seq <= 100; seq += 1) history.append(outputBytes(seq, chunk(seq)));
    await unreachable(store);
    expect(await store.unready()).toBe('redis unreachable');
    const reader = await readerOf(store, 'p-paused');
    // What is not written is read from memory meanwhile.
    expect(seqs(reader.readNow(1, 1 << 20)?.events ?? [])).toEqual(range(2, 100));
    server.resume();
    await store.flush();
    expect(failures).toEqual([]);
    expect(await store.unready()).toBeUndefined();
    expect(seqs(await readAll(reader))).toEqual(range(1, 100));
  });

  it('holds appends while its connection is down (a restarted Redis) and writes them once ioredis reconnects', async () => {
    const kept = tracker.track(await startRedisServer({ appendOnly: true }));
    const redis = new Redis(kept.url, { lazyConnect: true, maxRetriesPerRequest: null, retryStrategy: () => 50 });
    redis.on('error', () => undefined);
    tracker.track({ stop: async () => void (await redis.quit().catch(() => redis.disconnect())) });
    await redis.connect();
    const store = await RedisLogStore.open({ redis, prefix: `spec-${test}` });
    tracker.track({ close: () => store.close() });
    const failures: LogStoreFailure[] = [];
    store.failures$.subscribe((failure) => failures.push(failure));
    const history = store.histories(ENV, { epoch: 1 })('p-restart', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    await store.flush();
    const restarting = kept.restart();
    for (let seq = 2; seq <= 20; seq += 1) history.append(outputBytes(seq, chunk(seq)));
    await restarting;
    history.append(closed(21));
    await store.flush();
    expect(failures).toEqual([]);
    expect(seqs(await readAll(await readerOf(store, 'p-restart')))).toEqual(range(1, 21));
    expect(await redis.xlen(processLogKeys(`spec-${test}`, key('p-restart')).stream)).toBe(21);
  });

  it('fails a log alone past its buffer while Redis is unreachable: LOG_WRITE_FAILED (ENOBUFS), a writeFailed marker, never a hole', async () => {
    const { store, failures, pressure } = await open({ stallMs: 100, bufferBytes: 2000, pressureBytes: 1000 });
    const make = store.histories(ENV, { epoch: 1 });
    const big = make('p-big', { argv: ['x'], tty: false });
    const small = make('p-small', { argv: ['x'], tty: false });
    big.append(outputBytes(1, chunk(1)));
    small.append(outputBytes(1, chunk(1)));
    await store.flush();
    server.pause();
    for (let seq = 2; seq <= 11; seq += 1) big.append(outputBytes(seq, chunk(seq)));
    small.append(outputBytes(2, chunk(2)));
    expect(pressure).toEqual([{ key: key('p-big'), behind: true, backlogBytes: 1000 }]);
    await unreachable(store); // 1000 bytes held, within the buffer
    for (let seq = 12; seq <= 30; seq += 1) big.append(outputBytes(seq, chunk(seq)));
    expect(failures.map((failure) => (failure instanceof OutputLogError ? [failure.code, failure.processId, failure.errno] : failure.code))).toEqual([['LOG_WRITE_FAILED', 'p-big', 'ENOBUFS']]);
    expect(pressure.slice(1)).toEqual([{ key: key('p-big'), behind: false, backlogBytes: 0 }]);
    server.resume();
    big.append(closed(31));
    small.append(closed(3));
    await store.flush();
    expect(seqs(await readAll(await readerOf(store, 'p-big')))).toEqual([1, ['writeFailed', 2, 31], 'LOG_WRITE_FAILED']);
    expect(seqs(await readAll(await readerOf(store, 'p-small')))).toEqual([1, 2, 3]);
  });

  it("records a write failure in the process's meta: a reader on another store gets the owner's writeFailed marker, range and bytes, then LOG_WRITE_FAILED", async () => {
    const writer = await open({ stallMs: 100, bufferBytes: 2000 });
    const history = writer.store.histories(ENV, { epoch: 1 })('p-lost', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    await writer.store.flush();
    const other = await open({ followBlockMs: 200 });
    const remote = await readerOf(other.store, 'p-lost');
    expect(seqs((await remote.read(0, 1 << 20)).events)).toEqual([1]);
    const woken = remote.waitFor(1);
    server.pause();
    for (let seq = 2; seq <= 11; seq += 1) history.append(outputBytes(seq, chunk(seq))); // one batch, in flight
    await unreachable(writer.store);
    for (let seq = 12; seq <= 30; seq += 1) history.append(outputBytes(seq, chunk(seq))); // past the buffer at 22
    expect(writer.failures.map((failure) => (failure instanceof OutputLogError ? failure.errno : failure.code))).toEqual(['ENOBUFS']);
    server.resume();
    // The process goes on: what it sends is counted lost, its close reaches the metadata.
    history.append(outputBytes(31, chunk(31)));
    history.append(closed(32));
    await writer.store.flush();
    await writer.store.metaWritten(key('p-lost'));
    await woken;
    const onOwner = await readAll(await readerOf(writer.store, 'p-lost'));
    expect(seqs(onOwner)).toEqual([1, ['writeFailed', 2, 32], 'LOG_WRITE_FAILED']);
    expect(onOwner[1]).toMatchObject({ droppedEvents: 31, droppedBytes: 3100 - 100 });
    // The batch in flight landed in the stream once Redis answered: neither reader is served it.
    expect(await writer.redis.xlen(processLogKeys(`spec-${test}`, key('p-lost')).stream)).toBe(11);
    const elsewhere = await readAll(remote);
    expect(elsewhere).toEqual(onOwner);
    expect(elsewhere[2]).toMatchObject({ type: 'failed', error: { code: 'LOG_WRITE_FAILED', errno: 'ENOBUFS', processId: 'p-lost' } });
    expect(await other.store.meta(key('p-lost'))).toMatchObject({ state: 'closed' });
  });

  it('bounds flush() while Redis does not answer: at flushTimeoutMs the log fails (ETIMEDOUT), and its readers on every store get a writeFailed marker', async () => {
    const clock = new VirtualClock(1_000_000);
    const { store, failures } = await open({ scheduler: clock, stallMs: 100, flushTimeoutMs: 1_000 });
    const history = store.histories(ENV, { epoch: 1 })('p-stop', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    await store.flush();
    server.pause();
    for (let seq = 2; seq <= 5; seq += 1) history.append(outputBytes(seq, chunk(seq)));
    let flushed = false;
    const flushing = store.flush().then(() => (flushed = true));
    await clock.advance(999);
    expect({ flushed, failures }).toEqual({ flushed: false, failures: [] });
    await clock.advance(1);
    await flushing;
    expect(failures.map((failure) => (failure instanceof OutputLogError ? [failure.code, failure.processId, failure.errno] : failure.code))).toEqual([['LOG_WRITE_FAILED', 'p-stop', 'ETIMEDOUT']]);
    history.append(closed(6)); // after the failure: counted lost
    server.resume();
    await store.metaWritten(key('p-stop'));
    const onOwner = await readAll(await readerOf(store, 'p-stop'));
    expect(seqs(onOwner)).toEqual([1, ['writeFailed', 2, 6], 'LOG_WRITE_FAILED']);
    expect(onOwner[1]).toMatchObject({ droppedBytes: 400 });
    const other = await open();
    expect(await readAll(await readerOf(other.store, 'p-stop'))).toEqual(onOwner);
  });

  it('lets a reader on another store wait at a log whose write failed as its host stopped (unknown), and read on once a store takes it back', async () => {
    const clock = new VirtualClock(1_000_000);
    const a = await open({ scheduler: clock, stallMs: 100, closeTimeoutMs: 1_000 });
    const history = a.store.histories(ENV, { epoch: 1 })('p-left', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    await a.store.flush();
    server.pause();
    for (let seq = 2; seq <= 3; seq += 1) history.append(outputBytes(seq, chunk(seq)));
    const closing = a.store.close();
    await clock.advance(1_000);
    await closing;
    server.resume();
    await a.store.metaWritten(key('p-left'));
    const reading = await open({ followBlockMs: 200 });
    const hash = await reading.redis.hgetall(processLogKeys(`spec-${test}`, key('p-left')).meta);
    expect({ state: hash['state'], errno: hash['writeFailedErrno'] }).toEqual({ state: 'unknown', errno: 'ETIMEDOUT' });
    const remote = await readerOf(reading.store, 'p-left');
    const first = await remote.read(0, 64 * 1024);
    expect({ seqs: seqs(first.events), ended: first.ended }).toEqual({ seqs: [1], ended: false });
    let woke = false;
    const waiting = remote.waitFor(first.lastSeq).then(() => (woke = true));
    // Another store takes the process back at a newer epoch and writes on after what the stream holds.
    const taking = await open();
    await taking.redis.hset(ownerKey(`spec-${test}`, ENV), 'owner', 'host-c', 'epoch', '2');
    const held = await taking.store.adopt(key('p-left'), 2);
    if (held === undefined) throw new Error('the log of p-left is gone');
    expect(woke).toBe(false);
    const continued = taking.store.histories(ENV, { epoch: 2 })('p-left', { argv: ['x'], tty: false });
    continued.append(outputBytes(held + 1, chunk(held + 1)));
    continued.append(closed(held + 2));
    await taking.store.flush();
    await waiting;
    expect(seqs(await readAll(remote, first.lastSeq))).toEqual(range(2, held + 2));
  });

  it('lets another store follow a log as it is written: one XREAD loop wakes its reader, and the close ends it', async () => {
    const writer = await open({ followBlockMs: 200 });
    const history = writer.store.histories(ENV, { epoch: 1 })('p-follow', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    await writer.store.flush();
    const { store } = await open({ followBlockMs: 200 });
    const reader = await readerOf(store, 'p-follow');
    expect(reader).toBe(await readerOf(store, 'p-follow'));
    const got: number[] = [];
    // Each time the reader is caught up and waits on the follow loop.
    const waits = new Subject<number>();
    const waiting = (cursor: number): Promise<number> => firstValueFrom(waits.pipe(filter((at) => at === cursor)));
    const waitingAt1 = waiting(1);
    const following = (async () => {
      let cursor = 0;
      for (;;) {
        const read = await reader.read(cursor, 1 << 20);
        for (const event of read.events) if ('seq' in event) got.push(event.seq);
        cursor = read.lastSeq;
        if (read.ended) return;
        if (!read.caughtUp) continue;
        const waited = reader.waitFor(cursor);
        waits.next(cursor);
        await waited;
      }
    })();
    await waitingAt1;
    const waitingAt5 = waiting(5);
    for (let seq = 2; seq <= 5; seq += 1) history.append(outputBytes(seq, chunk(seq)));
    await waitingAt5;
    history.append(closed(6));
    await following;
    expect(got).toEqual(range(1, 6));
  });

  it('expires a released process with its keys, and forgets it in the index', async () => {
    const { store, redis } = await open({ releasedRetentionMs: 300 });
    const history = store.histories(ENV, { epoch: 1 })('p-expire', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    history.append(closed(2));
    history.release();
    await store.flush();
    const keys = processLogKeys(`spec-${test}`, key('p-expire'));
    const ttls = await Promise.all([redis.pttl(keys.stream), redis.pttl(keys.meta)]);
    expect(ttls.every((ttl) => ttl > 0 && ttl <= 300)).toBe(true);
    expect((await store.list()).map((meta) => meta.processId)).toEqual(['p-expire']);
    // Redis's own expiry, awaited as its keyspace events (expired) for both keys.
    await expiredEvents(redis, [keys.stream, keys.meta]);
    expect(await redis.exists(keys.stream, keys.meta)).toBe(0);
    expect(await store.list()).toEqual([]);
    await store.enforce(); // lets go of its own log of it too
    expect(await store.openReader(key('p-expire'))).toBeUndefined();
  });
});

describe('RedisLogStore: a store script that gives nothing usable', () => {
  const keysOf = (processId: string): [string, string, string, string] => {
    const keys = processLogKeys(`spec-${test}`, key(processId));
    return [keys.stream, keys.meta, keys.owner, keys.trims];
  };
  const failureOf = async (call: Promise<unknown>): Promise<unknown> => call.then(() => 'resolved', (error: unknown) => error);

  it('rejects with StoreScriptError (STORE_SCRIPT_FAILED) naming the script, when it is not defined on the connection', async () => {
    const { store, redis } = await open();
    Reflect.deleteProperty(redis, 'execRxLogAppend');
    const error = await failureOf(store.scripts.append(keysOf('p-none'), { epoch: 1, name: 'w' }, 0, 0, []));
    expect(error).toBeInstanceOf(StoreScriptError);
    expect(error).toMatchObject({ code: 'STORE_SCRIPT_FAILED', script: 'execRxLogAppend', failure: 'undefined', message: 'the store script execRxLogAppend is not defined on its connection' });
  });

  it('rejects with StoreScriptError (STORE_SCRIPT_FAILED) saying what came back, when Redis answers a script with the wrong shape', async () => {
    const { store, redis } = await open();
    // The same command names, other scripts: a real Redis answers them with what the host cannot use.
    redis.defineCommand('execRxLogAppend', { numberOfKeys: 4, lua: 'return {1, 2}' });
    redis.defineCommand('execRxLogMeta', { numberOfKeys: 4, lua: "return 'OK'" });
    const append = await failureOf(store.scripts.append(keysOf('p-shape'), { epoch: 1, name: 'w' }, 0, 0, []));
    expect(append).toBeInstanceOf(StoreScriptError);
    expect(append).toMatchObject({ code: 'STORE_SCRIPT_FAILED', failure: 'reply', message: 'the store script execRxLogAppend replied an array of 2 values where 7 integers were expected' });
    const meta = await failureOf(store.scripts.meta(keysOf('p-shape'), 1, 'update', 0, []));
    expect(meta).toMatchObject({ code: 'STORE_SCRIPT_FAILED', failure: 'reply', message: 'the store script execRxLogMeta replied a string where 2 integers were expected' });
  });

  it('fails the log at once with LOG_WRITE_FAILED, STORE_SCRIPT_FAILED its errno (sending again would get the same), instead of resending it for ever', async () => {
    const { store, redis } = await open();
    const history = store.histories(ENV, { epoch: 1 })('p-fails', { argv: ['x'], tty: false });
    history.append(outputBytes(1, chunk(1)));
    await store.flush();
    redis.defineCommand('execRxLogAppend', { numberOfKeys: 4, lua: 'return {1}' });
    const failed = firstValueFrom(store.failures$);
    history.append(outputBytes(2, chunk(2)));
    const failure = await failed;
    expect(failure).toBeInstanceOf(OutputLogError);
    expect(failure).toMatchObject({ code: 'LOG_WRITE_FAILED', processId: 'p-fails', errno: 'STORE_SCRIPT_FAILED', message: 'output log of process p-fails failed to write: STORE_SCRIPT_FAILED' });
  });
});

/** Resolves once Redis has expired each of `names` (its `expired` keyspace events, asked for on its own connection). */
async function expiredEvents(redis: Redis, names: readonly string[]): Promise<void> {
  await redis.config('SET', 'notify-keyspace-events', 'Ex');
  const listener = redis.duplicate();
  try {
    const left = new Set(names);
    const done = new Promise<void>((resolve) =>
      listener.on('message', (_channel: string, name: string) => {
        left.delete(name);
        if (left.size === 0) resolve();
      }),
    );
    await listener.subscribe('__keyevent@0__:expired');
    // A key gone before the subscription counts as expired.
    for (const name of names) if ((await redis.exists(name)) === 0) left.delete(name);
    if (left.size > 0) await done;
  } finally {
    listener.disconnect();
  }
}
