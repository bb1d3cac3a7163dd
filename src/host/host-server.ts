/**
 * The host side of codex's direct remote transport (docs/protocol.md#direct-remote-transport): an HTTP(S)
 * server with the environment registry endpoint and the WebSocket acceptor it hands out. Executors
 * register with a SigV4 signature, get a url carrying a capability token, and dial it with a signed
 * upgrade; each accepted socket becomes (or replaces) an environment's connection.
 *
 * Status codes matter to the executor: at registration anything but 200 makes it exit; on an upgrade
 * 5xx/408/429 make it retry, 409 makes it re-register, and any other 4xx makes it exit and kill its
 * processes. So limits answer 429 or 503, and 401 is kept for requests that do not belong.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Observable } from 'rxjs';
import { WebSocketServer } from 'ws';
import type { EnvironmentManagerOptions } from '../environment/environment-manager';
import { CONNECT_PATH, decodeEnvironmentId, hostPort, isLoopbackHost, parseTarget, readBody, REGISTER_PATH, refuseUpgrade, safeHostHeader, sendJson } from './host-http';
import type { HostedEnvironment } from './hosted-environments';
import { HostedEnvironments } from './hosted-environments';
import { RateLimiter } from './rate-limiter';
import { Registrations } from './registrations';
import type { IssuedRegistration } from './registrations';
import type { AccessKeyStore, SigV4Policy } from './sigv4';
import { verifySigV4 } from './sigv4';

/** What {@link HostServer.environments$} lists (see `./hosted-environments`). */
export type { HostedEnvironment, HostedEnvironmentInfo, HostedState } from './hosted-environments';

/** The transport name of the direct registration (docs/protocol.md#registration). */
export const DIRECT_TRANSPORT = 'direct_jsonrpc_v1';

/** Options of {@link startHostServer}. Every limit has a default; credentials do not. */
export interface HostServerOptions {
  /** Accepted access key ids and secrets (from a file or the environment, see `./host-credentials`). */
  readonly credentials: AccessKeyStore;
  /** Bind address. Plain HTTP is refused unless it is loopback. @default '127.0.0.1' */
  readonly host?: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** Serve HTTPS/WSS with this PEM certificate chain and key. @default none: plain HTTP (loopback only) */
  readonly tls?: {
    /** The PEM certificate chain. */
    readonly cert: string | Buffer;
    /** The PEM private key. */
    readonly key: string | Buffer;
  };
  /** The base url executors reach the host at, when it differs from what they dialled (a proxy). */
  readonly publicUrl?: string;
  /** SigV4 signing region executors use. @default 'us-east-1' */
  readonly region?: string;
  /** SigV4 signing service. @default 'execute-api' */
  readonly service?: string;
  /** How far a signature's `x-amz-date` may be from the host's clock. @default 300000 (5 min) */
  readonly maxClockSkewMs?: number;
  /** Largest WebSocket message accepted from an executor. @default 67108864 (64 MiB) */
  readonly maxFrameBytes?: number;
  /** Environments served at once; beyond, new ones get 503. @default 64 */
  readonly maxEnvironments?: number;
  /** Registrations plus upgrades per second, over all clients; beyond, 429. @default 10 */
  readonly maxHandshakesPerSecond?: number;
  /** Burst allowance of that rate. @default 20 */
  readonly handshakeBurst?: number;
  /** Options of each environment's manager. @default clientName 'exec-rx-host' */
  readonly manager?: Partial<EnvironmentManagerOptions>;
  /** Where the host writes what happens (one line each). Never given a token, signature or secret. @default none */
  readonly log?: (line: string) => void;
}

/** A running host. */
export interface HostServer {
  /** The base url (`http://127.0.0.1:PORT`), the executor's `--remote`. */
  readonly url: string;
  /**
   * Every environment's current generation (id, generation, state, info, environment), as a new array
   * on each change. Replays the current list to each subscriber; completes when the host closes; never errors.
   */
  readonly environments$: Observable<readonly HostedEnvironment[]>;
  /** The current generation of one environment. */
  environment(id: string): HostedEnvironment | undefined;
  /** The command an executor runs to join, with `<placeholders>` where the credentials go. */
  joinCommand(environmentId?: string): string;
  /** Terminates an environment's current socket (the executor re-dials and is adopted as a replacement). */
  dropSocket(environmentId: string): boolean;
  /** Stops listening, closes every environment (processes stay with their executors) and socket. Idempotent. */
  close(): Promise<void>;
}

const MAX_REGISTER_BODY_BYTES = 16 * 1024;
const STALE_REGISTRATION_MS = 30_000;
const DEFAULTS = { host: '127.0.0.1', region: 'us-east-1', service: 'execute-api', maxClockSkewMs: 300_000, maxFrameBytes: 64 * 1024 * 1024, maxEnvironments: 64, rate: 10, burst: 20 };

/**
 * Starts the host. Resolves once listening; rejects when the address is in use, or plain HTTP was asked
 * for on a non-loopback address. The caller owns the host and calls `close()`.
 */
export async function startHostServer(options: HostServerOptions): Promise<HostServer> {
  const host = options.host ?? DEFAULTS.host;
  if (options.tls === undefined && !isLoopbackHost(host)) {
    throw new Error(`refusing plain HTTP on ${host}: executors require https/wss off loopback; pass a TLS certificate and key`);
  }
  const direct = new DirectHost(options);
  const server = options.tls === undefined ? createServer(direct.onRequest) : createTlsServer({ cert: options.tls.cert, key: options.tls.key }, direct.onRequest);
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  server.on('upgrade', direct.onUpgrade);
  server.on('clientError', (_error, socket: Duplex) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('host server has no TCP address');
  return direct.serve(server, `${options.tls === undefined ? 'http' : 'https'}://${hostPort(host, address.port)}`);
}

/** The request handlers and state behind a {@link HostServer}. */
class DirectHost {
  private readonly policy: SigV4Policy;
  private readonly limiter: RateLimiter;
  private readonly registrations: Registrations;
  private readonly table: HostedEnvironments;
  private readonly wss: WebSocketServer;
  private readonly log: (line: string) => void;
  private readonly maxEnvironments: number;

  constructor(private readonly options: HostServerOptions) {
    this.log = options.log ?? (() => undefined);
    this.policy = { keys: options.credentials, region: options.region ?? DEFAULTS.region, service: options.service ?? DEFAULTS.service, maxClockSkewMs: options.maxClockSkewMs ?? DEFAULTS.maxClockSkewMs };
    this.limiter = new RateLimiter(options.maxHandshakesPerSecond ?? DEFAULTS.rate, options.handshakeBurst ?? DEFAULTS.burst);
    this.maxEnvironments = options.maxEnvironments ?? DEFAULTS.maxEnvironments;
    this.registrations = new Registrations(this.maxEnvironments * 8);
    this.table = new HostedEnvironments({ clientName: 'exec-rx-host', ...options.manager }, this.log);
    this.wss = new WebSocketServer({ noServer: true, maxPayload: options.maxFrameBytes ?? DEFAULTS.maxFrameBytes, perMessageDeflate: false });
  }

  readonly onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    this.register(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  };

  readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    if (!this.limiter.tryTake()) return refuseUpgrade(socket, 429, { 'retry-after': String(this.limiter.retryAfterSeconds()) });
    const target = parseTarget(req.url);
    const match = target === undefined ? null : CONNECT_PATH.exec(target.pathname);
    const id = decodeEnvironmentId(match?.[1]);
    const token = target?.searchParams.get('token') ?? undefined;
    if (match === null || id === undefined || token === undefined) return this.unauthorized(socket, 'unknown upgrade url');
    const auth = verifySigV4({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: '' }, this.policy);
    if (!auth.ok) return this.unauthorized(socket, `upgrade for ${id}: signature ${auth.reason}`);
    const check = this.registrations.check(id, match[2] ?? '', token, auth.accessKeyId);
    if (check === 'unauthorized') return this.unauthorized(socket, `upgrade for ${id}: bad capability token`);
    if (check === 'stale') {
      this.log(`upgrade for ${id}: superseded registration (409, the executor re-registers)`);
      return refuseUpgrade(socket, 409);
    }
    const live = this.table.liveIds();
    // A new generation (none yet, or the current one failed) must fit under the limit; a replacement always does.
    if (!live.includes(id) && live.length >= this.maxEnvironments) {
      this.log(`upgrade for ${id}: at the limit of ${this.maxEnvironments} environments (503)`);
      return refuseUpgrade(socket, 503, { 'retry-after': '5' });
    }
    return this.accept(id, req, socket, head);
  };

  serve(server: Server, url: string): HostServer {
    let closing: Promise<void> | undefined;
    return {
      url,
      environments$: this.table.environments$,
      environment: (id) => this.table.get(id),
      joinCommand: (environmentId = '<environment-id>') => this.joinCommand(this.options.publicUrl ?? url, environmentId),
      dropSocket: (id) => this.table.dropSocket(id),
      close: () => (closing ??= this.close(server)),
    };
  }

  private async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = parseTarget(req.url);
    if (req.method === 'GET' && target?.pathname === '/readyz') return sendJson(res, 200, { status: 'ready' });
    const match = target === undefined ? null : REGISTER_PATH.exec(target.pathname);
    if (match === null) return sendJson(res, 404, { error: 'not found' });
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
    if (!this.limiter.tryTake()) return sendJson(res, 429, { error: 'too many requests' }, { 'retry-after': String(this.limiter.retryAfterSeconds()) });
    const body = await readBody(req, MAX_REGISTER_BODY_BYTES);
    if (body === undefined) return sendJson(res, 413, { error: 'request too large' }, { connection: 'close' });
    const auth = verifySigV4({ method: 'POST', path: req.url ?? '/', headers: req.headers, body }, this.policy);
    const id = decodeEnvironmentId(match[1]);
    if (!auth.ok) {
      this.log(`registration${id === undefined ? '' : ` for ${id}`}: refused (401, signature ${auth.reason})`);
      return sendJson(res, 401, { error: 'unauthorized' });
    }
    const host = safeHostHeader(req);
    if (id === undefined || host === undefined || !isDirectRequest(body)) return sendJson(res, 400, { error: 'bad registration request' });
    if (!this.admit(id)) {
      this.log(`registration for ${id}: at the limit of ${this.maxEnvironments} environments (503)`);
      return sendJson(res, 503, { error: 'too many environments' }, { 'retry-after': '5' });
    }
    const issued = this.registrations.issue(id, auth.accessKeyId);
    this.log(`registration for ${id}: accepted (${issued.registrationId})`);
    sendJson(res, 200, { environment_id: id, transport: DIRECT_TRANSPORT, registration_id: issued.registrationId, url: this.connectUrl(host, id, issued) });
  }

  /** Whether a registration for `id` fits, making room by forgetting failed or never-connected environments. */
  private admit(id: string): boolean {
    const registered = this.registrations.environments();
    const known = new Set([...registered.map(([envId]) => envId), ...this.table.liveIds()]);
    if (known.has(id) || known.size < this.maxEnvironments) return true;
    const failed = new Set(this.table.failedIds());
    const now = Date.now();
    const evictable = registered.find(([envId, issuedAt]) => failed.has(envId) || (this.table.get(envId) === undefined && now - issuedAt > STALE_REGISTRATION_MS));
    if (evictable === undefined) return false;
    this.registrations.forget(evictable[0]);
    this.table.remove(evictable[0]);
    return true;
  }

  private accept(id: string, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.table.adopt(id, ws));
  }

  private unauthorized(socket: Duplex, why: string): void {
    this.log(`${why}: refused (401)`);
    refuseUpgrade(socket, 401);
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

  private async close(server: Server): Promise<void> {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await this.table.close();
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
    this.registrations.clear();
    await closed;
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
