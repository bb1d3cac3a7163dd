/**
 * The executors' side of the host of codex's direct remote transport (docs/protocol.md#direct-remote-transport):
 * an HTTP(S) server with the environment registry endpoint (`./executor-registration`) and the WebSocket
 * acceptor it hands out. Executors register with a SigV4 signature, get a url carrying a capability
 * token, and dial it with a signed upgrade; each accepted socket becomes (or replaces) an environment's
 * connection.
 *
 * Status codes matter to the executor: at registration anything but 200 makes it exit; on an upgrade
 * 5xx/408/429 make it retry, 409 makes it re-register, and any other 4xx makes it exit and kill its
 * processes. So limits answer 429 or 503, and 401 is kept for requests that do not belong.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { WebSocketServer } from 'ws';
import { errnoOf } from '../store/errno';
import type { LogStore } from '../store/log-store';
import type { PersistedEnvironment, PersistedRegistration, StateStore } from '../store/state-store';
import type { RegistrationParts } from './executor-registration';
import { RECENT_CONFLICT_MS, register } from './executor-registration';
import { CONNECT_PATH, decodeEnvironmentId, parseTarget, sendJson } from './host-http';
import type { HostLogger } from './host-logger';
import { hostLoggerOf } from './host-logger';
import type { HostMonitor } from './host-monitor';
import type { HostCloseOptions, HostServer, HostServerOptions, HostSideUrls } from './host-options';
import { HOST_DEFAULTS as DEFAULTS, HOSTED_MANAGER_DEFAULTS } from './host-options';
import type { HostStops } from './host-stop';
import { stopHost } from './host-stop';
import { HostedEnvironments } from './hosted-environments';
import type { ClusterOptions } from './cluster/cluster-options';
import { HostCluster, isStale } from './cluster/host-cluster';
import { joinCommand, refused, registrationOutcome } from './handshake-outcome';
import { prepareUpgrade } from './cluster/cluster-upgrade';
import { messageOf } from '../errors';
import type { HandshakeOutcome, HostMetrics } from './metrics/host-metrics';
import { RateLimiter } from './rate-limiter';
import type { IssuedRegistration } from './registrations';
import { Registrations } from './registrations';
import type { SigV4Policy } from './sigv4';
import { verifySigV4 } from './sigv4';

/** The stores a host keeps what it must in, and what they held when it started. */
export interface HostStores {
  /** The processes' output. */
  readonly logs: LogStore;
  /** Registrations, sessions, claims, keyed starts, stdin records. */
  readonly state: StateStore;
  /** The registrations the state held at the start (an executor re-dialling their urls is let in at once). */
  readonly registrations: readonly PersistedRegistration[];
  /** The sessions the state held at the start (the executors the host takes back). */
  readonly sessions: readonly PersistedEnvironment[];
  /** This host as an environment's owner: its instance id. */
  readonly owner: string;
  /** With replicas: the cluster this host is one replica of (its state is `cluster.state`). */
  readonly cluster?: ClusterOptions;
}

/** The executors' side of a host: registration, the signed WebSocket upgrade, and the environments. */
export class DirectHost {
  private readonly policy: SigV4Policy;
  private readonly limiter: RateLimiter;
  private readonly registrations: Registrations;
  private readonly table: HostedEnvironments;
  private readonly wss: WebSocketServer;
  private readonly log: HostLogger;
  private readonly maxEnvironments: number;
  private readonly scheduler: SchedulerLike;
  private readonly registering: RegistrationParts;
  /** When each environment was last answered 409 for a registration of a previous run (bounded). */
  private readonly conflicts = new Map<string, number>();
  /** The access key id of each environment's latest accepted upgrade (what its session is recorded with). */
  private readonly keyIds = new Map<string, string>();
  private closing = false;
  /** With replicas: this host's part in the cluster (leases, fencing, draining). */
  readonly cluster: HostCluster | undefined;

  constructor(
    private readonly options: HostServerOptions,
    /** Where the host keeps what it must; the host flushes and closes the log store after the environments. */
    private readonly stores: HostStores,
    /** Counts registrations, upgrades and what the environments' processes send. */
    private readonly metrics?: HostMetrics,
  ) {
    this.log = hostLoggerOf(options.log);
    this.scheduler = options.scheduler ?? asyncScheduler;
    const scheduler = this.scheduler;
    this.policy = {
      keys: options.credentials,
      region: options.region ?? DEFAULTS.region,
      service: options.service ?? DEFAULTS.service,
      maxClockSkewMs: options.maxClockSkewMs ?? DEFAULTS.maxClockSkewMs,
      scheduler,
    };
    this.limiter = new RateLimiter(options.maxHandshakesPerSecond ?? DEFAULTS.rate, options.handshakeBurst ?? DEFAULTS.burst, scheduler);
    this.maxEnvironments = options.maxEnvironments ?? DEFAULTS.maxEnvironments;
    this.registrations = new Registrations(this.maxEnvironments * 8, scheduler);
    // The registrations of before: an executor re-dialling the url it registered with gets in without a 409.
    for (const kept of stores.registrations) this.registrations.restore(kept.id, kept.registrationId, kept.accessKeyId, Buffer.from(kept.tokenDigest, 'hex'));
    const remembered = new Map(stores.sessions.map((session) => [session.id, session.sessionId]));
    const sessions = { rememberedAt: (id: string) => remembered.get(id), record: (id: string, sessionId: string, epoch: number) => this.recordSession(id, sessionId, epoch) };
    // The environments keep the host's clock unless the manager options name their own.
    const observe = metrics === undefined ? {} : { onCall: metrics.onCall };
    const managerOptions = { ...HOSTED_MANAGER_DEFAULTS, scheduler, ...observe, ...options.manager };
    const watch = metrics === undefined ? undefined : metrics.observeHistories.bind(metrics);
    const shared = stores.cluster !== undefined;
    this.table = new HostedEnvironments(managerOptions, this.log, { logs: stores.logs, state: stores.state, sessions, owner: stores.owner, shared }, undefined, watch);
    this.cluster =
      stores.cluster === undefined
        ? undefined
        : new HostCluster(stores.cluster, {
            table: this.table,
            owner: stores.owner,
            log: this.log,
            scheduler,
            registrations: () => this.registrations.latestRecords(),
            keyIdOf: (id) => this.keyIds.get(id),
          });
    // A log that refuses this replica's epoch: another owns the environment now.
    if (this.cluster !== undefined) stores.logs.failures$.subscribe((error) => (isStale(error) ? this.cluster?.staleLog(error) : undefined));
    this.registering = {
      policy: this.policy,
      limiter: this.limiter,
      registrations: this.registrations,
      table: this.table,
      state: stores.state,
      log: this.log,
      scheduler,
      maxEnvironments: this.maxEnvironments,
      conflicts: this.conflicts,
      keyIds: this.keyIds,
      connectUrl: (host, id, issued) => this.connectUrl(host, id, issued),
      // A replica that stops still answers registrations (any replica can take the upgrade): a 503 would make the executor exit.
      stopping: () => this.closing && this.cluster === undefined,
      cluster: this.cluster,
    };
    // No client list: each socket it accepts goes to `table.adopt` at once, which owns it from there.
    this.wss = new WebSocketServer({ noServer: true, clientTracking: false, maxPayload: options.maxFrameBytes ?? DEFAULTS.maxFrameBytes, perMessageDeflate: false });
  }

  readonly onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // Every answer here is a registration's (or a stray request's): counted by its status once sent.
    if (this.metrics !== undefined) res.once('finish', () => this.metrics?.registration(registrationOutcome(res.statusCode)));
    register(this.registering, req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  };

  readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    if (this.cluster === undefined) {
      this.metrics?.upgrade(this.upgrade(req, socket, head));
      return;
    }
    // With replicas the registration and the owner are read from the shared store first; the store not
    // answering is a 503 (the executor retries), never a 409 or 401.
    this.clusterUpgrade(this.cluster, req, socket, head).then(
      (outcome) => this.metrics?.upgrade(outcome),
      (error: unknown) => this.metrics?.upgrade(this.unavailable(socket, undefined, `the shared store did not answer (${messageOf(error)})`, '2')),
    );
  };

  /** The environments this host serves (the operator API reads them). */
  get environments(): HostedEnvironments {
    return this.table;
  }

  /** The running host; `stops` are the operator API's parts of its graceful stop (see `HostServer.close`). */
  serve(server: Server, url: string, instanceId: string, monitor: HostMonitor, stops: HostStops, urls: HostSideUrls = {}): HostServer {
    let closing: Promise<void> | undefined;
    const close = (options?: HostCloseOptions): Promise<void> => (closing ??= this.close(server, stops, options));
    return {
      url,
      instanceId,
      metricsUrl: urls.metricsUrl,
      previewUrl: urls.previewUrl,
      environments$: this.table.environments$,
      monitor,
      environment: (id) => this.table.get(id),
      joinCommand: (environmentId = '<environment-id>') => joinCommand(this.policy, this.options.publicUrl ?? url, environmentId),
      dropSocket: (id) => this.table.dropSocket(id),
      drain: async () => {
        if (this.cluster === undefined) return;
        await this.cluster.drain();
        await close();
        this.log.info({}, 'drained: every executor let go to re-dial another replica');
      },
      close,
      [Symbol.asyncDispose]: () => close(),
    };
  }

  /** A replica's upgrade (see `prepareUpgrade`), then as a single host's. Rejects when the shared store does not answer. */
  private async clusterUpgrade(cluster: HostCluster, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<HandshakeOutcome> {
    const why = await prepareUpgrade(cluster, this.registrations, this.table, req.url);
    if (why !== undefined) return this.unavailable(socket, undefined, why, '2');
    // The executor gave up while the store was read: nothing to answer.
    if (socket.destroyed) return '503';
    return this.upgrade(req, socket, head);
  }

  /** Answers one signed upgrade; returns how (for the metrics). */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): HandshakeOutcome {
    // Stopping: whatever it is, the executor retries it later (a 409 now would have it register with a host that is going).
    if (this.closing) return refused(socket, 503, { 'retry-after': '5' });
    if (!this.limiter.tryTake()) return refused(socket, 429, { 'retry-after': String(this.limiter.retryAfterSeconds()) });
    const target = parseTarget(req.url);
    const match = target === undefined ? null : CONNECT_PATH.exec(target.pathname);
    const id = decodeEnvironmentId(match?.[1]);
    const token = target?.searchParams.get('token') ?? undefined;
    if (match === null || id === undefined || token === undefined) return this.unauthorized(socket, 'unknown upgrade url');
    const auth = verifySigV4({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: '' }, this.policy);
    if (!auth.ok) return this.unauthorized(socket, `upgrade for ${id}: signature ${auth.reason}`, id);
    const registrationId = match[2] ?? '';
    const check = this.registrations.check(id, registrationId, token, auth.accessKeyId);
    // Signed by a key the host accepts, naming a registration it did not issue: a previous run's (or
    // another host's, which a store that forgets issued): 409, never 401, which would kill its processes.
    if (check === 'unauthorized' && !this.registrations.knows(registrationId)) return this.previousRun(id, socket);
    if (check === 'unauthorized') return this.unauthorized(socket, `upgrade for ${id}: bad capability token`, id);
    if (check === 'stale') {
      this.log.warn({ environmentId: id, status: 409 }, `upgrade for ${id}: superseded registration (409, the executor re-registers)`);
      return refused(socket, 409);
    }
    // Signed before the socket its live generation holds: an upgrade the executor gave up on, handled late.
    if (this.table.isStaleUpgrade(id, auth.signedAt)) return this.unavailable(socket, id, 'signed before the socket it holds (a stale upgrade)', '2');
    const live = this.table.liveIds();
    // A new generation (none yet, or the current one failed) must fit under the limit; a replacement always
    // does; with replicas the limit counted the cluster at the registration, which this upgrade presents.
    if (!live.includes(id) && live.length >= this.maxEnvironments && this.cluster === undefined) {
      return this.unavailable(socket, id, `at the limit of ${this.maxEnvironments} environments`, '5');
    }
    this.keyIds.set(id, auth.accessKeyId);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.table.adopt(id, ws, auth.signedAt));
    return live.includes(id) ? 'replacement' : 'accepted';
  }

  /**
   * A signed upgrade naming a registration this run did not issue (a previous run did, before a restart):
   * 409, so the executor re-registers and dials the new url (while the host stops, `onUpgrade` answers 503 first).
   */
  private previousRun(id: string, socket: Duplex): HandshakeOutcome {
    const now = this.scheduler.now();
    for (const [envId, at] of this.conflicts) if (now - at > RECENT_CONFLICT_MS || this.conflicts.size >= this.maxEnvironments * 8) this.conflicts.delete(envId);
    this.conflicts.delete(id);
    this.conflicts.set(id, now);
    this.log.info({ environmentId: id, status: 409 }, `upgrade for ${id}: registration of a previous run (409, the executor re-registers)`);
    return refused(socket, 409);
  }

  /** Records an environment's session in the state, at `epoch` (with the key id of its latest accepted upgrade). Never rejects. */
  private recordSession(id: string, sessionId: string, epoch: number): Promise<void> {
    const accessKeyId = this.keyIds.get(id);
    if (accessKeyId === undefined) return Promise.resolve();
    const failed = (error: unknown): void => this.log.error({ environmentId: id }, `environment ${id}: could not record its session: ${errnoOf(error)}`);
    return this.stores.state.setSession(id, { sessionId, accessKeyId }, epoch).catch(failed);
  }

  /** 503 for an upgrade (of `id`, when known): the executor retries it after `retryAfter` seconds. Says why. */
  private unavailable(socket: Duplex, id: string | undefined, why: string, retryAfter: string): HandshakeOutcome {
    const fields = id === undefined ? { status: 503 } : { environmentId: id, status: 503 };
    this.log.warn(fields, `upgrade${id === undefined ? '' : ` for ${id}`}: ${why} (503, the executor retries)`);
    return refused(socket, 503, { 'retry-after': retryAfter });
  }

  private unauthorized(socket: Duplex, why: string, id?: string): HandshakeOutcome {
    this.log.warn({ ...(id === undefined ? {} : { environmentId: id }), status: 401 }, `${why}: refused (401)`);
    return refused(socket, 401);
  }

  private connectUrl(host: string, id: string, issued: IssuedRegistration): string {
    const base = this.options.publicUrl ?? `${this.options.tls === undefined ? 'http' : 'https'}://${host}`;
    const wsBase = base.replace(/^http/, 'ws').replace(/\/+$/, '');
    return `${wsBase}/cloud/environment/${encodeURIComponent(id)}/direct/connect/${issued.registrationId}?token=${issued.token}`;
  }

  /** The graceful stop (see `HostServer.close` and `./host-stop`). */
  private close(server: Server, stops: HostStops, options: HostCloseOptions = {}): Promise<void> {
    return stopHost(
      {
        server,
        stops,
        logs: this.stores.logs,
        state: this.stores.state,
        log: this.log,
        refuse: () => {
          this.closing = true;
          void this.cluster?.stop();
        },
        closeEnvironments: async () => {
          // The managers close without terminating anything: each executor keeps its session (80 s) and re-dials.
          await this.table.close();
          this.wss.close();
          this.registrations.clear();
        },
      },
      options,
    );
  }
}
