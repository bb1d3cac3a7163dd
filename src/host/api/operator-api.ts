/**
 * The operator API (`/api/v1`): authentication with operator tokens (never executor credentials), its
 * own rate limits (apart from the executors' handshake budget), routing, and problem+json for every
 * error. `/api/v1/openapi.json` and the landing page `/` need no token; everything else does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { HOST_INSTANCE_HEADER } from '../../wire/operator-api';
import type { HostedEnvironments } from '../hosted-environments';
import { RateLimiter } from '../rate-limiter';
import type { ApiContext } from './api-context';
import { HostedProcesses } from './hosted-processes';
import { LANDING_PAGE } from './landing-page';
import { OPENAPI_DOCUMENT } from './openapi';
import type { OperatorTokens } from './operator-tokens';
import { ApiProblem, problemOf, sendProblem } from './problem';
import { DEFAULT_STALL_MS } from './process-event-stream';
import { methodsOf, Router } from './router';
import { environmentRoutes } from './routes-environments';
import { processRoutes } from './routes-processes';
import type { SseLimits } from './sse';
import { DEFAULT_SSE_LIMITS, SseHub } from './sse';

/** Options of the operator API (all but the tokens have defaults). */
export interface OperatorApiOptions {
  /** The accepted operator tokens. */
  readonly tokens: OperatorTokens;
  /** Event stream limits. @default 1 MiB buffer, 256 streams per token, 1024 in all, ping every 15 s */
  readonly sse?: Partial<SseLimits>;
  /** The largest request body read. @default 4194304 (4 MiB: a 3 MiB stdin write in base64) */
  readonly maxBodyBytes?: number;
  /** Requests per second per token; beyond, 429. @default 100 */
  readonly requestsPerSecond?: number;
  /** Burst of that rate. @default 200 */
  readonly requestBurst?: number;
  /** Unauthenticated requests per second (all together, a burst of twice that and at least 1); beyond, 429 instead of 401. @default 20 */
  readonly unauthenticatedPerSecond?: number;
  /** How long a paused event stream waits for its client to take what was sent. @default 30000 */
  readonly stallMs?: number;
}

/** The burst of the unauthenticated bucket: two seconds' worth, and at least one request. */
const anonymousBurst = (perSecond: number): number => Math.max(1, perSecond * 2);

/**
 * Throws a RangeError naming the first option out of range, so a host refuses to start rather than answer
 * every request with a 500 later: rates must be finite and > 0, a burst ≥ 1, counts and sizes whole
 * numbers ≥ 1, `stallMs` and `pingMs` finite and > 0.
 */
export function checkOperatorOptions(options: OperatorApiOptions): void {
  const positive = (name: string, value: number | undefined): void => {
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) throw new RangeError(`operator option ${name} must be a finite number > 0 (got ${value})`);
  };
  const whole = (name: string, value: number | undefined): void => {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1)) throw new RangeError(`operator option ${name} must be a whole number >= 1 (got ${value})`);
  };
  positive('requestsPerSecond', options.requestsPerSecond);
  if (options.requestBurst !== undefined && !(Number.isFinite(options.requestBurst) && options.requestBurst >= 1)) {
    throw new RangeError(`operator option requestBurst must be a finite number >= 1 (got ${options.requestBurst})`);
  }
  positive('unauthenticatedPerSecond', options.unauthenticatedPerSecond);
  positive('stallMs', options.stallMs);
  whole('maxBodyBytes', options.maxBodyBytes);
  whole('sse.bufferBytes', options.sse?.bufferBytes);
  whole('sse.perToken', options.sse?.perToken);
  whole('sse.total', options.sse?.total);
  positive('sse.pingMs', options.sse?.pingMs);
}

const OPENAPI_PATH = '/api/v1/openapi.json';
/** The methods of the public paths (the OpenAPI document and the landing page). */
const PUBLIC_METHODS = ['GET', 'HEAD'] as const;

/** A path template the API serves and the methods it has there. */
export interface ServedRoute {
  readonly path: string;
  readonly methods: readonly string[];
}

/**
 * Serves the operator API on the host's HTTP server. `close()` ends every event stream. Its rate limits,
 * pings and stall timers run on `scheduler` (the host's, `HostServerOptions.scheduler`).
 */
export class OperatorApi {
  private readonly router: Router;
  private readonly hub: SseHub;
  private readonly perToken = new Map<string, RateLimiter>();
  private readonly anonymous: RateLimiter;
  private readonly openapi: string;

  constructor(
    environments: HostedEnvironments,
    private readonly options: OperatorApiOptions,
    private readonly hostInstance: string,
    private readonly log: (line: string) => void,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    checkOperatorOptions(options);
    const limits = { ...DEFAULT_SSE_LIMITS, ...options.sse };
    this.hub = new SseHub(limits, hostInstance, scheduler);
    const anonymousPerSecond = options.unauthenticatedPerSecond ?? 20;
    this.anonymous = new RateLimiter(anonymousPerSecond, anonymousBurst(anonymousPerSecond), scheduler);
    const context: ApiContext = {
      hostInstance,
      environments,
      processes: new HostedProcesses(),
      hub: this.hub,
      maxBodyBytes: options.maxBodyBytes ?? 4 * 1024 * 1024,
      stallMs: options.stallMs ?? DEFAULT_STALL_MS,
      scheduler,
    };
    this.router = new Router([...environmentRoutes(context), ...processRoutes(context)]);
    this.openapi = JSON.stringify(OPENAPI_DOCUMENT);
  }

  /** Whether a request target is the operator API's (the rest belongs to the executors' routes). */
  static owns(target: string): boolean {
    return target === '/' || target.startsWith('/?') || target.startsWith('/#') || target === '/api' || target.startsWith('/api/') || target.startsWith('/api?');
  }

  /**
   * Every path under `/api/v1` this API answers, with its methods: the OpenAPI document and the routed
   * paths (the landing page `/` is not part of the API). A spec holds this and the document together.
   */
  get routes(): readonly ServedRoute[] {
    return [{ path: OPENAPI_PATH, methods: PUBLIC_METHODS }, ...this.router.routes.map((route) => ({ path: route.path, methods: methodsOf(route) }))];
  }

  /** Answers one request. Never throws; every failure is a problem+json answer. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.dispatch(req, res).catch((error: unknown) => {
      const problem = problemOf(error);
      if (problem.status >= 500 && problem.code === 'HOST_ERROR') this.log(`operator API: ${req.method ?? '?'} failed: ${error instanceof Error ? error.name : 'error'}`);
      sendProblem(res, problem, this.hostInstance);
    });
  }

  /** Ends every event stream (the host is closing). */
  close(): void {
    this.hub.close();
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    const method = req.method ?? 'GET';
    const path = target.split('?')[0] ?? '/';
    if (path === '/' || path === OPENAPI_PATH) return this.servePublic(method, path, res);
    const tokenId = this.options.tokens.authenticate(req.headers.authorization);
    if (tokenId === undefined) {
      if (!this.anonymous.tryTake()) throw new ApiProblem(429, 'TOO_MANY_REQUESTS', 'too many unauthenticated requests', { 'retry-after': String(this.anonymous.retryAfterSeconds()) });
      throw new ApiProblem(401, 'UNAUTHORIZED');
    }
    const limiter = this.limiterOf(tokenId);
    if (!limiter.tryTake()) throw new ApiProblem(429, 'TOO_MANY_REQUESTS', 'too many requests for this token', { 'retry-after': String(limiter.retryAfterSeconds()) });
    const match = this.router.match(method, target);
    await match.handler({ req, res, params: match.params, query: match.query, tokenId });
  }

  private servePublic(method: string, path: string, res: ServerResponse): void {
    if (!(PUBLIC_METHODS as readonly string[]).includes(method)) throw new ApiProblem(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}`, { allow: PUBLIC_METHODS.join(', ') });
    if (path === OPENAPI_PATH) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(this.openapi), 'cache-control': 'no-store', [HOST_INSTANCE_HEADER]: this.hostInstance });
      res.end(method === 'HEAD' ? undefined : this.openapi);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': "default-src 'self'; script-src 'unsafe-inline'; connect-src 'self'" });
    res.end(method === 'HEAD' ? undefined : LANDING_PAGE);
  }

  private limiterOf(tokenId: string): RateLimiter {
    let limiter = this.perToken.get(tokenId);
    if (limiter === undefined) {
      limiter = new RateLimiter(this.options.requestsPerSecond ?? 100, this.options.requestBurst ?? 200, this.scheduler);
      this.perToken.set(tokenId, limiter);
    }
    return limiter;
  }
}
