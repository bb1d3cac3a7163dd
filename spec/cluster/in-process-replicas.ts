/**
 * Replicas in the spec's own process (`startHostServer` with `cluster`) on one real redis-server, each on
 * its own connection, and scripted executors that join one of them (they answer `initialize`, so the
 * replica claims the environment), and what replicas log ({@link HeardLines}). Its owner stops what it
 * made with {@link InProcessReplicas.close}.
 */
import Redis from 'ioredis';
import { filter, firstValueFrom } from 'rxjs';
import type WebSocket from 'ws';
import { OperatorTokens } from '../../src/host/api/operator-tokens';
import type { HostServer } from '../../src/host/host-options';
import type { ForwardingOptions } from '../../src/host/cluster/cluster-options';
import type { HostLogger } from '../../src/host/host-logger';
import { startHostServer } from '../../src/host/host-server';
import { MemoryLogStore } from '../../src/store/memory/memory-log-store';
import type { SharedStateStore } from '../../src/store/cluster-state';
import { RedisStateStore } from '../../src/store/redis/redis-state-store';
import { ApiClient, paths } from '../host/api/api-client';
import { registerOk, upgrade } from '../host/signed-client';
import { trackForCleanup } from '../support/executor';
import type { SpecRedis } from '../support/redis-server';

/** How one replica runs. */
export interface ReplicaOptions {
  /** How often its round renews leases (and finds a lost dataset). @default the host's */
  readonly renewMs?: number;
  /** Its lease. @default the host's */
  readonly leaseMs?: number;
  /** How long a drain waits before it lets the executors go. @default the host's */
  readonly drainDelayMs?: number;
  /** The cluster-wide environment limit. @default the host's */
  readonly maxEnvironments?: number;
  /** Hears each line it logs (a {@link HeardLines}' `hear`, say). @default none */
  readonly log?: (line: string) => void;
  /** The state store it is given, made from its Redis store (to watch or steer its calls). @default the store itself */
  readonly wrap?: (state: RedisStateStore) => SharedStateStore;
  /** Serves TLS with this certificate and key. @default plain HTTP */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Forwards owner-only calls (issue 39). @default none */
  readonly forwarding?: ForwardingOptions;
  /** Where its audit trail goes. @default its log */
  readonly audit?: HostLogger;
}

/** A start's answer, as a call for an environment gets it. */
export interface StartAnswer {
  readonly status: number;
  readonly code: string | undefined;
  readonly retryAfter: string | undefined;
}

/** In-process replicas on `redis` (see the module's doc). */
export class InProcessReplicas {
  private readonly connections: Redis[] = [];
  private readonly sockets: WebSocket[] = [];
  private readonly hosts: HostServer[] = [];

  constructor(
    private readonly redis: SpecRedis,
    private readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string },
    private readonly token: string,
  ) {}

  /** A replica under `prefix` (the spec's cluster: replicas with one prefix share it). Stopped by the file's tracker. */
  async replica(prefix: string, options: ReplicaOptions = {}): Promise<HostServer> {
    const { renewMs, leaseMs, drainDelayMs, maxEnvironments } = options;
    const connection = new Redis(this.redis.url, { commandTimeout: 1_000, maxRetriesPerRequest: 1 });
    this.connections.push(connection);
    const store = await RedisStateStore.open({ redis: connection, prefix, epochs: 'clock' });
    const state = options.wrap?.(store) ?? store;
    const timing = { ...(renewMs === undefined ? {} : { renewMs }), ...(leaseMs === undefined ? {} : { leaseMs }), ...(drainDelayMs === undefined ? {} : { drainDelayMs }) };
    const host = trackForCleanup(
      await startHostServer({
        credentials: new Map([[this.credentials.accessKeyId, this.credentials.secretAccessKey]]),
        log: options.log ?? (() => undefined),
        cluster: { state, id: `cluster-${prefix}`, ...timing, ...(options.forwarding === undefined ? {} : { forwarding: options.forwarding }) },
        ...(options.tls === undefined ? {} : { tls: options.tls }),
        ...(options.audit === undefined ? {} : { audit: options.audit }),
        logStore: new MemoryLogStore(),
        operator: { tokens: new OperatorTokens([this.token]) },
        ...(maxEnvironments === undefined ? {} : { maxEnvironments }),
      }),
    );
    this.hosts.push(host);
    return host;
  }

  /** A scripted executor of `id` joins `host` (it answers `initialize` with session `session-<id>`); resolves once connected. */
  async join(host: HostServer, id: string): Promise<void> {
    const registration = await registerOk(host.url, id, this.credentials);
    const opened = await upgrade(registration.url, this.credentials);
    if (!('socket' in opened)) throw new Error(`upgrade of ${id} refused: ${opened.status}`);
    this.sockets.push(opened.socket);
    const initialize = JSON.parse(await opened.firstMessage) as { id: number };
    opened.socket.send(JSON.stringify({ id: initialize.id, result: { sessionId: `session-${id}` } }));
    await firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === id && e.state === 'connected'))));
  }

  /** What `host` answers a start in environment `id` (`argv: ['true']`). */
  async startAnswer(host: HostServer, id: string): Promise<StartAnswer> {
    const response = await new ApiClient(host.url, this.token).post(paths.processes(id), { argv: ['true'] });
    return { status: response.status, code: (response.body as { code?: string }).code, retryAfter: response.headers['retry-after'] };
  }

  /** Ends the scripted executors' sockets (after each test). */
  dropSockets(): void {
    for (const socket of this.sockets.splice(0)) socket.terminate();
  }

  /**
   * Stops the replicas, then lets their Redis connections go (after all, before the redis-server stops): a
   * replica stopped after its connection went (the file's tracker runs last) left the commands of its
   * stop pending, each with its command timeout (the leak check's "2 × Timeout", seen in CI).
   */
  async close(): Promise<void> {
    this.dropSockets();
    await Promise.all(this.hosts.splice(0).map((host) => host.close()));
    for (const connection of this.connections.splice(0)) connection.disconnect();
  }
}

/** What replicas log, kept; a wait resolves once a line matching it is said. */
export class HeardLines {
  readonly lines: string[] = [];
  private readonly waits: { readonly pattern: RegExp; readonly resolve: () => void }[] = [];

  /** Give it as a replica's `log`. */
  readonly hear = (line: string): void => {
    this.lines.push(line);
    for (const wait of this.waits.filter((one) => one.pattern.test(line))) {
      this.waits.splice(this.waits.indexOf(wait), 1);
      wait.resolve();
    }
  };

  /** Resolves once a line matching `pattern` was heard: at once when one was already. */
  said(pattern: RegExp): Promise<void> {
    if (this.lines.some((line) => pattern.test(line))) return Promise.resolve();
    return this.next(pattern);
  }

  /** Resolves at the next line matching `pattern` (those heard already do not count). */
  next(pattern: RegExp): Promise<void> {
    return new Promise((resolve) => this.waits.push({ pattern, resolve }));
  }
}
