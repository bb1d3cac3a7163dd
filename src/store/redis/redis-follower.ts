/**
 * Following the logs of one environment that other writers append to (another host, or this store's
 * previous life): ONE blocking `XREAD BLOCK` loop per environment per store, on its own dedicated
 * connection, covering every stream of the environment that has a waiter, its news fanned out through
 * one rxjs Subject. Before each block it looks at the followed processes' meta hashes (an end that no
 * entry says: a release, a failure, a loss, a removal); a waiter for a stream the blocked XREAD does not
 * cover unblocks it (`CLIENT UNBLOCK`). The loop stops when no waiter remains, and on `stop()`. Its
 * readers are `./redis-remote-log`'s.
 */
import type Redis from 'ioredis';
import type { SchedulerLike, Subscription } from 'rxjs';
import { filter, Subject, take } from 'rxjs';
import { decodeCounters, decodeWriteFailure, seqOfId } from './redis-log-codec';
import type { ProcessLogKeys } from './redis-log-keys';
import type { StoredRange } from './redis-log-read';

/** What the loop learnt of one followed log: its last seq, and whether it takes no more appends. */
export interface FollowedLog {
  /** The process. */
  readonly processId: string;
  /** The last seq its stream holds. */
  readonly lastSeq: number;
  /** Nothing more will come (closed and all written, released, failed, lost, removed). */
  readonly ended: boolean;
}

/**
 * How long a followed log's keys may be missing before its readers take it as removed: Redis restarted
 * empty drops them too, and the owner writes them back within its renewal period (3 s by default).
 */
export const VANISHED_GRACE_MS = 15_000;

/**
 * Whether a log read from its keys takes no more appends once a reader is at `lastSeq`. One whose owner's
 * write failed takes none, unless its host stopped (`unknown`): the replica that takes it back clears the
 * failure and writes on from what the stream holds (the executor still has the rest).
 */
export function endedBy(range: Pick<StoredRange, 'exists' | 'state' | 'released' | 'writeFailure'> & { readonly closedSeq: number }, lastSeq: number): boolean {
  if (!range.exists || range.released || range.state === 'failed' || range.state === 'lost') return true;
  if (range.writeFailure !== undefined && range.state !== 'unknown') return true;
  return range.closedSeq > 0 && lastSeq >= range.closedSeq;
}

/** A log followed: its keys and the waiters on it. */
interface Followed {
  readonly keys: ProcessLogKeys;
  waiters: number;
  /** The smallest seq a waiter waits after. */
  afterSeq: number;
}

/** The follow loop of one environment (see the module's doc). */
export class EnvironmentFollower {
  /** What the loop learns, for every waiter of the environment. */
  private readonly news = new Subject<FollowedLog>();
  private readonly followed = new Map<string, Followed>();
  private connection: { readonly redis: Redis; readonly id: Promise<number> } | undefined;
  private running = false;
  private blockedOn: ReadonlySet<string> = new Set();
  private stopped = false;
  private pause: Subscription | undefined;
  /** When each followed log's meta hash was first seen missing (cleared when it is back). */
  private readonly missingSince = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    private readonly connect: () => Redis,
    private readonly scheduler: SchedulerLike,
    /** How long one XREAD blocks (and so how late an end no entry says is seen). */ private readonly blockMs: number,
  ) {}

  /** Resolves once `processId`'s log holds a seq after `afterSeq`, ends, or the follower stops. Never rejects. */
  wait(processId: string, keys: ProcessLogKeys, afterSeq: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = this.followed.get(processId) ?? { keys, waiters: 0, afterSeq };
      entry.waiters += 1;
      entry.afterSeq = Math.min(entry.afterSeq, afterSeq);
      this.followed.set(processId, entry);
      this.news.pipe(filter((news) => news.processId === processId && (news.lastSeq > afterSeq || news.ended)), take(1)).subscribe({
        complete: () => {
          entry.waiters -= 1;
          if (entry.waiters === 0 && this.followed.get(processId) === entry) this.followed.delete(processId);
          resolve();
        },
      });
      this.kick(processId);
    });
  }

  /** Stops the loop, resolves every waiter, closes the connection. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.pause?.unsubscribe();
    this.news.complete();
    this.followed.clear();
    const connection = this.connection;
    this.connection = undefined;
    connection?.redis.disconnect();
  }

  private kick(processId: string): void {
    if (!this.running) {
      this.running = true;
      void this.loop().finally(() => {
        this.running = false;
        if (!this.stopped && this.followed.size > 0) this.kick(processId);
      });
      return;
    }
    if (!this.blockedOn.has(processId)) void this.unblock();
  }

  private async unblock(): Promise<void> {
    const connection = this.connection;
    if (connection === undefined) return;
    try {
      await this.redis.client('UNBLOCK', await connection.id);
    } catch {
      // the block ends by its timeout
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopped && this.followed.size > 0) {
      try {
        await this.look();
        if (this.stopped || this.followed.size === 0) return;
        await this.block();
      } catch {
        if (this.stopped) return;
        await this.delay(this.blockMs); // Redis unreachable: look again later
      }
    }
  }

  /** The followed logs' meta hashes: their last seq and whether they ended. */
  private async look(): Promise<void> {
    const followed = [...this.followed.entries()];
    const pipeline = this.redis.pipeline();
    for (const [, entry] of followed) pipeline.hgetall(entry.keys.meta);
    const replies = (await pipeline.exec()) ?? [];
    followed.forEach(([processId], i) => {
      const reply = replies[i];
      if (reply === undefined || reply[0] !== null || typeof reply[1] !== 'object' || reply[1] === null) return;
      const hash: Record<string, string> = {};
      for (const [name, value] of Object.entries(reply[1])) if (typeof value === 'string') hash[name] = value;
      const { lastSeq } = decodeCounters(hash);
      const exists = hash.startedAt !== undefined || !this.vanished(processId, hash.startedAt === undefined);
      const writeFailure = decodeWriteFailure(hash);
      const ended = endedBy({ exists, state: hash.state, released: hash.released === '1', writeFailure, closedSeq: Number(hash.closedSeq ?? 0) || 0 }, lastSeq);
      if (!this.news.closed) this.news.next({ processId, lastSeq, ended });
    });
  }

  /**
   * Whether `processId`'s keys have been missing for longer than {@link VANISHED_GRACE_MS} (then it was
   * removed); `missing`: they are missing now. A log whose keys come back is followed as before.
   */
  vanished(processId: string, missing: boolean): boolean {
    if (!missing) {
      this.missingSince.delete(processId);
      return false;
    }
    const now = this.scheduler.now();
    const since = this.missingSince.get(processId) ?? now;
    if (now - since <= VANISHED_GRACE_MS) {
      this.missingSince.set(processId, since);
      return false;
    }
    // Removed: its readers end now, and nothing of it is kept here.
    this.missingSince.delete(processId);
    return true;
  }

  /** One XREAD BLOCK over every followed stream, from its smallest waited-after seq. */
  private async block(): Promise<void> {
    const connection = this.connect$();
    await connection.id;
    const followed = [...this.followed.entries()];
    this.blockedOn = new Set(followed.map(([processId]) => processId));
    const streams = followed.map(([, entry]) => entry.keys.stream);
    const ids = followed.map(([, entry]) => `${entry.afterSeq}-0`);
    try {
      const reply = await connection.redis.xread('COUNT', 1, 'BLOCK', this.blockMs, 'STREAMS', ...streams, ...ids);
      for (const [stream, items] of reply ?? []) {
        const found = followed.find(([, entry]) => entry.keys.stream === stream);
        const last = items[items.length - 1];
        if (found === undefined || last === undefined) continue;
        if (!this.news.closed) this.news.next({ processId: found[0], lastSeq: seqOfId(last[0]), ended: false });
      }
    } finally {
      this.blockedOn = new Set();
    }
  }

  private connect$(): { readonly redis: Redis; readonly id: Promise<number> } {
    if (this.connection === undefined) {
      const redis = this.connect();
      const id = redis.client('ID');
      id.catch(() => undefined); // awaited by the loop (which retries) and by `unblock`; never unhandled
      this.connection = { redis, id };
    }
    return this.connection;
  }

  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.pause = this.scheduler.schedule(() => resolve(), ms);
    });
  }
}

/** The follow loops of one store: one per environment, each on its own connection, made on first use. */
export class Followers {
  private readonly byEnvironment = new Map<string, EnvironmentFollower>();
  private stopped = false;

  constructor(
    private readonly redis: Redis,
    /** Makes a dedicated connection. */ private readonly connect: () => Redis,
    private readonly scheduler: SchedulerLike,
    private readonly blockMs: number,
  ) {}

  /** The follow loop of `environmentId`. */
  of(environmentId: string): EnvironmentFollower {
    let follower = this.byEnvironment.get(environmentId);
    if (follower === undefined) {
      const dedicated = (): Redis => this.connect().on('error', () => undefined); // its loop retries; the store's connection reports
      follower = new EnvironmentFollower(this.redis, dedicated, this.scheduler, this.blockMs);
      if (this.stopped) follower.stop();
      this.byEnvironment.set(environmentId, follower);
    }
    return follower;
  }

  /** Stops every loop and closes its connection. */
  stop(): void {
    this.stopped = true;
    for (const follower of this.byEnvironment.values()) follower.stop();
  }
}
