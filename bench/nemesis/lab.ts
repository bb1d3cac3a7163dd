/**
 * The nemesis's lab (issue 38): a live cluster of real parts on loopback. A redis-server (AOF on,
 * `everysec`), restartable on its port with its data or empty; one port in front of it for the replicas
 * (`./redis-front`), with a fault proxy per replica behind it (a replica↔Redis partition); three replicas,
 * the built `exec-rx host --redis-url-file`, each on its own data dir; a fault proxy in front of each
 * replica, which HAProxy's `server` lines name (a balancer↔replica partition; a restarted replica's new
 * port is retargeted there); HAProxy running the README's configuration; one real executor per
 * environment registering with HAProxy's url. `stop()` stops every part, whatever state it is in.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import type { RunningHaproxy } from '../lib/haproxy';
import { startHaproxy } from '../lib/haproxy';
import { freePort } from '../lib/loopback';
import type { RunningRedis } from '../lib/redis-server';
import { startRedisServer } from '../lib/redis-server';
import type { FaultProxy } from './fault-proxy';
import { startFaultProxy } from './fault-proxy';
import { call } from './http';
import { LabExecutors } from './lab-executors';
import type { RedisFront } from './redis-front';
import { startRedisFront } from './redis-front';
import type { ReplicaLine } from './replica-proc';
import { ReplicaProc } from './replica-proc';
import { orTimeout, sleep } from './time';

/** The replicas' names. */
export const REPLICA_NAMES = ['a', 'b', 'c'] as const;

/** One replica's place in the lab: its proxies and its incarnations (the last is the current one). */
export interface ReplicaSlot {
  readonly name: string;
  /** In front of it: what HAProxy's `server` line names. */
  readonly lb: FaultProxy;
  /** Between it and Redis. */
  readonly redis: FaultProxy;
  readonly incarnations: ReplicaProc[];
}

/** What a lab is made of (see the module's doc). */
export interface LabOptions {
  /** The environments (one executor each). */
  readonly environments: readonly string[];
}

/** A running lab (see the module's doc). */
export class Lab {
  readonly token = randomBytes(18).toString('base64url');
  readonly credentials = { accessKeyId: `AKIDNEMESIS${randomBytes(4).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(24).toString('base64url') };
  readonly slots = new Map<string, ReplicaSlot>();
  readonly work = mkdtempSync(join(tmpdir(), 'exec-rx-nemesis-'));
  redis: RunningRedis | undefined;
  front: RedisFront | undefined;
  haproxy: RunningHaproxy | undefined;
  executors: LabExecutors | undefined;
  /** What the lab itself had to do that a report should say (a replica started again). */
  readonly notes: string[] = [];
  /** A client straight to Redis (not through the front): the audit's. */
  audit: Redis | undefined;
  private stopping: Promise<void> | undefined;

  /** Starts every part; on failure stops what it started and rethrows. */
  static async start(options: LabOptions): Promise<Lab> {
    const lab = new Lab();
    try {
      await lab.build(options);
      return lab;
    } catch (error: unknown) {
      await lab.stop();
      throw error;
    }
  }

  /** The balancer's url. */
  get url(): string {
    if (this.haproxy === undefined) throw new Error('the lab has no balancer');
    return this.haproxy.url;
  }

  /** Replica `name`'s slot. */
  slot(name: string): ReplicaSlot {
    const slot = this.slots.get(name);
    if (slot === undefined) throw new Error(`no replica ${name}`);
    return slot;
  }

  /** Replica `name`'s current incarnation. */
  proc(name: string): ReplicaProc {
    const proc = this.slot(name).incarnations.at(-1);
    if (proc === undefined) throw new Error(`replica ${name} never started`);
    return proc;
  }

  /**
   * Starts a new incarnation of `name` (its last one must have exited) on the same data dir; retargets its
   * proxy. A replica that cannot start (it exits when Redis does not answer within its connect timeout: Redis
   * restarting, or its proxy refusing) is started again, up to four times a second apart, as a service
   * manager would; each such start is noted.
   */
  async startReplica(name: string): Promise<ReplicaProc> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce(name);
      } catch (error: unknown) {
        if (attempt >= 4) throw error;
        this.notes.push(`${error instanceof Error ? error.message.slice(0, 200) : String(error)}: started again`);
        await sleep(1_000);
      }
    }
  }

  private async startOnce(name: string): Promise<ReplicaProc> {
    const slot = this.slot(name);
    const launch = {
      name,
      incarnation: slot.incarnations.length + 1,
      work: this.work,
      redisUrlFile: join(this.work, 'redis-url'),
      publicUrl: this.url,
      keyId: this.credentials.accessKeyId,
      secret: this.credentials.secretAccessKey,
      token: this.token,
    };
    const proc = await ReplicaProc.start(launch, (pid) => this.front?.owns(name, pid));
    slot.incarnations.push(proc);
    slot.lb.retarget(proc.port);
    return proc;
  }

  /** The name of the replica whose replica id is `owner` (any incarnation), if one is. */
  replicaOf(owner: string): ReplicaProc | undefined {
    for (const slot of this.slots.values()) for (const proc of slot.incarnations) if (proc.replicaId === owner) return proc;
    return undefined;
  }

  /** Environment `id`'s owner as Redis says (a replica id), if Redis answers within a second. */
  async owner(id: string): Promise<string | undefined> {
    const audit = this.audit;
    if (audit === undefined) return undefined;
    return (await orTimeout(audit.hget(`exec-rx:{env:${id}}:owner`, 'owner').catch(() => null), 1_000)) ?? undefined;
  }

  /** Every stderr line of every incarnation, in the order they arrived. */
  lines(): ReplicaLine[] {
    return [...this.slots.values()].flatMap((slot) => slot.incarnations.flatMap((proc) => proc.lines)).sort((x, y) => x.at - y.at);
  }

  /** Resolves with the first line after `since` whose message matches; undefined after `timeoutMs`. */
  async line(pattern: RegExp, since: number, timeoutMs: number): Promise<ReplicaLine | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const slot of this.slots.values()) {
        for (const proc of slot.incarnations) {
          const found = proc.lines.find((line) => line.at >= since && pattern.test(line.msg));
          if (found !== undefined) return found;
        }
      }
      if (Date.now() > deadline) return undefined;
      await sleep(100);
    }
  }

  /** Stops every part (executors first, so that their processes die with them). Idempotent, never rejects. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.executors?.stopAll();
      await this.haproxy?.stop().catch(() => undefined);
      await Promise.allSettled([...this.slots.values()].flatMap((slot) => slot.incarnations.map((proc) => proc.stop())));
      await Promise.allSettled([...this.slots.values()].map((slot) => slot.lb.close()));
      await this.front?.close();
      this.audit?.disconnect();
      await this.redis?.stop().catch(() => undefined);
      rmSync(this.work, { recursive: true, force: true });
    })();
    return this.stopping;
  }

  /** Resolves once the balancer has sent a request to each replica (its health checks passed); throws after 15 s. */
  private async balanced(): Promise<void> {
    const seen = new Set<string>();
    const deadline = Date.now() + 15_000;
    while (seen.size < this.slots.size) {
      const answer = await call(`${this.url}/api/v1/host`, { headers: { authorization: `Bearer ${this.token}` }, timeoutMs: 2_000 }).catch(() => undefined);
      const id = answer?.headers['exec-rx-host-replica'];
      if (typeof id === 'string') seen.add(id);
      if (Date.now() > deadline) throw new Error(`the balancer sent requests to ${seen.size} of ${this.slots.size} replicas in 15 s`);
      if (typeof id !== 'string') await sleep(200);
    }
  }

  private async build(options: LabOptions): Promise<void> {
    this.redis = await startRedisServer({ appendOnly: true });
    this.audit = new Redis(this.redis.url, { maxRetriesPerRequest: 1, lazyConnect: true, enableOfflineQueue: true });
    this.audit.on('error', () => undefined);
    await this.audit.connect();
    this.front = await startRedisFront(this.redis.port, REPLICA_NAMES);
    writeFileSync(join(this.work, 'redis-url'), `${this.front.url}\n`, { mode: 0o600 });
    const nowhere = await freePort();
    for (const name of REPLICA_NAMES) this.slots.set(name, { name, lb: await startFaultProxy(nowhere), redis: this.front.lane(name), incarnations: [] });
    this.haproxy = await startHaproxy({ backends: REPLICA_NAMES.map((name) => ({ name, port: this.slot(name).lb.port })) });
    await Promise.all(REPLICA_NAMES.map((name) => this.startReplica(name)));
    await this.balanced();
    this.executors = new LabExecutors(this.url, this.credentials);
    const since = Date.now();
    for (const id of options.environments) {
      await this.executors.start([id]);
      // One at a time: the balancer spreads them by open connections (leastconn).
      const joined = await this.line(new RegExp(`^environment ${id} generation \\d+: connected`), since, 30_000);
      if (joined === undefined) throw new Error(`executor ${id} did not join within 30 s`);
    }
  }
}
