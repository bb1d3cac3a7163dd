/**
 * The executors' side of the host of codex's direct remote transport (docs/protocol.md#direct-remote-transport): an HTTP(S)
 * server with the environment registry endpoint and the WebSocket acceptor it hands out. Executors
 * register with a SigV4 signature, get a url carrying a capability token, and dial it with a signed
 * upgrade; each accepted socket becomes (or replaces) an environment's connection.
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
import { CONNECT_PATH, decodeEnvironmentId, parseTarget, readBody, REGISTER_PATH, refuseUpgrade, safeHostHeader, sendJson } from './host-http';
import type { HostCloseOptions, HostServer, HostServerOptions, HostStopStep } from './host-options';
import { DEFAULT_COME_BACK_RETRY_MS, DIRECT_TRANSPORT, HOST_DEFAULTS as DEFAULTS } from './host-options';
import { HostedEnvironments } from './hosted-environments';
import type { HostMonitor } from './host-monitor';
import type { HandshakeOutcome, HostMetrics } from './metrics/host-metrics';
import { errnoOf } from './log/log-fs';
import type { OutputLogStore } from './log/output-log-store';
import { RateLimiter } from './rate-limiter';
import { Registrations, tokenDigestOf } from './registrations';
import type { IssuedRegistration } from './registrations';
import type { HostState } from './state/host-state';
import type { HostLogger } from './host-logger';
import { hostLoggerOf } from './host-logger';
import type { SigV4Policy } from './sigv4';
import { verifySigV4 } from './sigv4';

/**
 * What a host's environments keep by default: processes started through the operator API replay
 * 16 384 events / 4 MiB each to late subscribers (256 events of line output is under a second), within
 * 256 MiB for all of them together.
 */
const HOSTED_MANAGER_DEFAULTS = {
  clientName: 'exec-rx-host',
  processHistory: { historyEvents: 16_384, historyBytes: 4 * 1024 * 1024 },
  totalHistoryBytes: 256 * 1024 * 1024,
} as const;

const MAX_REGISTER_BODY_BYTES = 16 * 1024;
const STALE_REGISTRATION_MS = 30_000;
/** How long after answering an environment 409 its re-registration is let past the limits. */
const RECENT_CONFLICT_MS = 5 * 60_000;

/** What the rest of the host does when it stops (the operator API's routes and event streams). */
export interface HostStops {
  /** Refuse every request from now on (503). */
  readonly refuse: () => void;
  /** End every event stream with the come-back event; returns how many. */
  readonly endStreams: (retryMs: number) => number;
  /** Stop the metrics endpoint, the last step. */
  readonly closeMetrics: () => Promise<void>;
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
  private readonly state: HostState | undefined;
  /** When each environment was last answered 409 for a registration of a previous run (bounded). */
  private readonly conflicts = new Map<string, number>();
  /** The access key id of each environment's latest accepted upgrade (what its session is recorded with). */
  private readonly keyIds = new Map<string, string>();
  private closing = false;

  constructor(
    private readonly options: HostServerOptions,
    /** The output logs on disk, when the host has a data dir; the host closes them after the environments. */
    private readonly outputLogs?: OutputLogStore,
    /** Counts registrations, upgrades and what the environments' processes send. */
    private readonly metrics?: HostMetrics,
  ) {
    this.log = hostLoggerOf(options.log);
    this.scheduler = options.scheduler ?? asyncScheduler;
    const scheduler = this.scheduler;
    this.policy = { keys: options.credentials, region: options.region ?? DEFAULTS.region, service: options.service ?? DEFAULTS.service, maxClockSkewMs: options.maxClockSkewMs ?? DEFAULTS.maxClockSkewMs, scheduler };
    this.limiter = new RateLimiter(options.maxHandshakesPerSecond ?? DEFAULTS.rate, options.handshakeBurst ?? DEFAULTS.burst, scheduler);
    this.maxEnvironments = options.maxEnvironments ?? DEFAULTS.maxEnvironments;
    this.registrations = new Registrations(this.maxEnvironments * 8, scheduler);
    this.state = options.state;
    // The registrations of before: an executor re-dialling the url it registered with gets in without a 409.
    for (const kept of options.state?.registrations() ?? []) this.registrations.restore(kept.id, kept.registrationId, kept.accessKeyId, Buffer.from(kept.tokenDigest, 'hex'));
    // The environments keep the host's clock unless the manager options name their own.
    const sessions = options.state === undefined ? undefined : { sessionOf: (id: string) => options.state?.environment(id)?.sessionId, record: (id: string, sessionId: string) => this.recordSession(id, sessionId) };
    const observe = metrics === undefined ? {} : { onCall: metrics.onCall };
    this.table = new HostedEnvironments({ ...HOSTED_MANAGER_DEFAULTS, scheduler, ...observe, ...options.manager }, this.log, outputLogs, sessions, undefined, metrics === undefined ? undefined : (factory) => metrics.observeHistories(factory));
    // No client list: each socket it accepts goes to `table.adopt` at once, which owns it from there.
    this.wss = new WebSocketServer({ noServer: true, clientTracking: false, maxPayload: options.maxFrameBytes ?? DEFAULTS.maxFrameBytes, perMessageDeflate: false });
  }

  readonly onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // Every answer here is a registration's (or a stray request's): counted by its status once sent.
    if (this.metrics !== undefined) res.once('finish', () => this.metrics?.registration(registrationOutcome(res.statusCode)));
    this.register(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  };

  readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    this.metrics?.upgrade(this.upgrade(req, socket, head));
  };

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
    if (check === 'unauthorized' && this.state !== undefined && !this.registrations.knows(registrationId)) return this.previousRun(id, socket);
    if (check === 'unauthorized') return this.unauthorized(socket, `upgrade for ${id}: bad capability token`, id);
    if (check === 'stale') {
      this.log.warn({ environmentId: id, status: 409 }, `upgrade for ${id}: superseded registration (409, the executor re-registers)`);
      return refused(socket, 409);
    }
    const live = this.table.liveIds();
    // A new generation (none yet, or the current one failed) must fit under the limit; a replacement always does.
    if (!live.includes(id) && live.length >= this.maxEnvironments) {
      this.log.warn({ environmentId: id, status: 503 }, `upgrade for ${id}: at the limit of ${this.maxEnvironments} environments (503)`);
      return refused(socket, 503, { 'retry-after': '5' });
    }
    this.keyIds.set(id, auth.accessKeyId);
    this.accept(id, req, socket, head);
    return live.includes(id) ? 'replacement' : 'accepted';
  }

  /** The environments this host serves (the operator API reads them). */
  get environments(): HostedEnvironments {
    return this.table;
  }

  /** The running host; `stops` are the operator API's parts of its graceful stop (see `HostServer.close`). */
  serve(server: Server, url: string, instanceId: string, monitor: HostMonitor, stops: HostStops, metricsUrl?: string): HostServer {
    let closing: Promise<void> | undefined;
    const close = (options?: HostCloseOptions): Promise<void> => (closing ??= this.close(server, stops, options));
    return {
      url,
      instanceId,
      metricsUrl,
      environments$: this.table.environments$,
      monitor,
      environment: (id) => this.table.get(id),
      joinCommand: (environmentId = '<environment-id>') => this.joinCommand(this.options.publicUrl ?? url, environmentId),
      dropSocket: (id) => this.table.dropSocket(id),
      close,
      [Symbol.asyncDispose]: () => close(),
    };
  }

  private async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = parseTarget(req.url);
    const match = target === undefined ? null : REGISTER_PATH.exec(target.pathname);
    if (match === null) return sendJson(res, 404, { error: 'not found' });
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
    const id = decodeEnvironmentId(match[1]);
    if (this.closing) {
      this.log.warn({ environmentId: id, status: 503 }, `registration${id === undefined ? '' : ` for ${id}`}: the host is stopping (503)`);
      return sendJson(res, 503, { error: 'the host is stopping' }, { 'retry-after': '5', connection: 'close' });
    }
    // A known environment is never refused for the rate: after a 409 its executor exits if this fails.
    // It still needs a valid signature below.
    if (!this.limiter.tryTake() && !(id !== undefined && this.isKnown(id))) return sendJson(res, 429, { error: 'too many requests' }, { 'retry-after': String(this.limiter.retryAfterSeconds()) });
    const body = await readBody(req, MAX_REGISTER_BODY_BYTES);
    if (body === undefined) return sendJson(res, 413, { error: 'request too large' }, { connection: 'close' });
    const auth = verifySigV4({ method: 'POST', path: req.url ?? '/', headers: req.headers, body }, this.policy);
    if (!auth.ok) {
      this.log.warn({ environmentId: id, status: 401 }, `registration${id === undefined ? '' : ` for ${id}`}: refused (401, signature ${auth.reason})`);
      return sendJson(res, 401, { error: 'unauthorized' });
    }
    const host = safeHostHeader(req);
    if (id === undefined || host === undefined || !isDirectRequest(body)) return sendJson(res, 400, { error: 'bad registration request' });
    if (!this.admit(id)) {
      this.log.warn({ environmentId: id, status: 503 }, `registration for ${id}: at the limit of ${this.maxEnvironments} environments (503)`);
      return sendJson(res, 503, { error: 'too many environments' }, { 'retry-after': '5' });
    }
    const issued = this.registrations.issue(id, auth.accessKeyId);
    // Kept before the answer (its token as a digest): after a restart the executor's re-dial is let in at
    // once. A failed write costs only that: the restarted host then answers 409 and it registers again.
    await this.state
      ?.setRegistration({ id, registrationId: issued.registrationId, accessKeyId: auth.accessKeyId, tokenDigest: tokenDigestOf(issued.token).toString('hex') })
      .catch((error: unknown) => this.log.error({ environmentId: id }, `registration for ${id}: could not be kept in the data dir (${errnoOf(error)}); after a restart it re-registers`));
    this.log.info({ environmentId: id, registrationId: issued.registrationId }, `registration for ${id}: accepted (${issued.registrationId})`);
    sendJson(res, 200, { environment_id: id, transport: DIRECT_TRANSPORT, registration_id: issued.registrationId, url: this.connectUrl(host, id, issued) });
  }

  /** Whether a registration for `id` fits, making room by forgetting failed or never-connected environments. */
  private admit(id: string): boolean {
    const registered = this.registrations.environments();
    const known = new Set([...registered.map(([envId]) => envId), ...this.table.liveIds()]);
    if (known.has(id) || this.isKnown(id) || known.size < this.maxEnvironments) return true;
    const failed = new Set(this.table.failedIds());
    const now = this.scheduler.now();
    const evictable = registered.find(([envId, issuedAt]) => failed.has(envId) || (this.table.get(envId) === undefined && now - issuedAt > STALE_REGISTRATION_MS));
    if (evictable === undefined) return false;
    this.registrations.forget(evictable[0]);
    this.table.remove(evictable[0]);
    this.keyIds.delete(evictable[0]);
    this.state?.forget(evictable[0]).catch(() => this.log.error({ environmentId: evictable[0] }, `environment ${evictable[0]}: could not forget its recorded session`));
    return true;
  }

  /**
   * With a state: whether `id` is an environment whose registration must not be refused for a limit: one
   * the data dir remembers, one live here, or one answered 409 lately. Without a state, none is.
   */
  private isKnown(id: string): boolean {
    if (this.state === undefined) return false;
    const conflictAt = this.conflicts.get(id);
    const recent = conflictAt !== undefined && this.scheduler.now() - conflictAt <= RECENT_CONFLICT_MS;
    return recent || this.state.environment(id) !== undefined || this.table.liveIds().includes(id);
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

  /** Records an environment's session in the state (with the key id of its latest accepted upgrade). */
  private recordSession(id: string, sessionId: string): Promise<void> {
    const accessKeyId = this.keyIds.get(id);
    if (this.state === undefined || accessKeyId === undefined) return Promise.resolve();
    return this.state.setSession(id, { sessionId, accessKeyId }).catch((error: unknown) => this.log.error({ environmentId: id }, `environment ${id}: could not record its session: ${errnoOf(error)}`));
  }

  private accept(id: string, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.table.adopt(id, ws));
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

  private joinCommand(baseUrl: string, environmentId: string): string {
    const service = this.policy.service === DEFAULTS.service ? '' : ` --aws-service ${this.policy.service}`;
    return (
      'AWS_ACCESS_KEY_ID=<access-key-id> AWS_SECRET_ACCESS_KEY=<secret-access-key> ' +
      `codex exec-server --remote ${baseUrl} --remote-transport direct --aws-sigv4 --aws-region ${this.policy.region}${service} --environment-id ${environmentId}`
    );
  }

  /** The graceful stop (see `HostServer.close`), step by step. */
  private async close(server: Server, stops: HostStops, options: HostCloseOptions = {}): Promise<void> {
    const onStep = options.onStep;
    const step = async (name: HostStopStep): Promise<void> => {
      await onStep?.(name);
    };
    await step('refusing');
    this.closing = true;
    stops.refuse();
    // Not listening any more; open connections stay (the event streams get their last event below), idle ones go.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await step('flushing output logs');
    await this.outputLogs?.flush();
    await step('ending event streams');
    const ended = stops.endStreams(options.retryMs ?? DEFAULT_COME_BACK_RETRY_MS);
    if (ended > 0) this.log.info({ streams: ended }, `stopping: ${ended} event stream(s) ended with the come-back event`);
    await step('closing output logs');
    // Before the executors go (the last flush): their processes' streams fail when the sockets close, and
    // that must not reach the logs; what an executor sends after this, the next run reads from it again (from the log's last seq).
    await this.outputLogs?.close();
    await step('closing executor sockets');
    // The managers close without terminating anything: each executor keeps its session (80 s) and re-dials.
    await this.table.close();
    this.wss.close();
    this.registrations.clear();
    server.closeAllConnections();
    await closed;
    await stops.closeMetrics();
  }
}

/** The registration body `{"transport":"direct_jsonrpc_v1"}` (other fields ignored). */
function isDirectRequest(body: Buffer): boolean {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && 'transport' in parsed && parsed.transport === DIRECT_TRANSPORT;
  } catch {
    return false;
  }
}

/** Refuses an upgrade with `status`; returns it as the outcome. */
function refused(socket: Duplex, status: 409 | 401 | 429 | 503, headers: Readonly<Record<string, string>> = {}): HandshakeOutcome {
  refuseUpgrade(socket, status, headers);
  return String(status) as HandshakeOutcome;
}

/** The outcome of a registration answered `status` (an unexpected one counts as 500: the label values stay few). */
function registrationOutcome(status: number): HandshakeOutcome {
  if (status === 200) return 'accepted';
  const known: readonly HandshakeOutcome[] = ['400', '401', '404', '405', '409', '413', '429', '500', '503'];
  return known.find((outcome) => outcome === String(status)) ?? '500';
}
