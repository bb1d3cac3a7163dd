/**
 * The host's own HTTP routes (everything but the executors' registration and upgrade): one route table
 * and one dispatch path for all of its rows. A public row is answered as it is; a token row only for a
 * request an operator token authenticates (never executor credentials), within that token's rate limit,
 * and a request without a token spends the unauthenticated budget first. Every error is problem+json.
 */
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RateLimiter } from '../rate-limiter';
import type { OperatorApiOptions } from './operator-api';
import { ApiProblem, problemOf, sendProblem } from './problem';
import type { ResponsePolicy, Route } from './router';
import { Router } from './router';

/** The options the dispatch path reads: the tokens and the rate limits (absent: no operator API). */
export type RouteAccess = Pick<OperatorApiOptions, 'tokens' | 'requestsPerSecond' | 'requestBurst' | 'unauthenticatedPerSecond'>;

/** The burst of the unauthenticated bucket: two seconds' worth, and at least one request. */
const anonymousBurst = (perSecond: number): number => Math.max(1, perSecond * 2);

/** Serves the rows of the route table on the host's HTTP server. */
export class HostRoutes {
  private readonly router: Router;
  private readonly perToken = new Map<string, RateLimiter>();
  private readonly anonymous: RateLimiter;
  private stopping = false;

  constructor(
    rows: readonly Route[],
    private readonly access: RouteAccess | undefined,
    private readonly hostInstance: string,
    private readonly log: (line: string) => void,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    this.router = new Router(rows);
    const anonymousPerSecond = access?.unauthenticatedPerSecond ?? 20;
    this.anonymous = new RateLimiter(anonymousPerSecond, anonymousBurst(anonymousPerSecond), scheduler);
  }

  /** Whether a request target is the table's (the rest belongs to the executors' routes). */
  owns(target: string): boolean {
    return this.router.owns(target);
  }

  /**
   * The host stops: every request from now on is answered 503 `CLOSED` (`Retry-After`, `Connection: close`),
   * but for the rows answered `whileStopping` (the probes, which say it themselves).
   */
  stop(): void {
    this.stopping = true;
  }

  /** Answers one request. Never throws; every failure is a problem+json answer. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    if (this.stopping && !this.router.answersWhileStopping(req.url ?? '/')) return sendProblem(res, new ApiProblem(503, 'CLOSED', 'the host is stopping; retry shortly', { 'retry-after': '1', connection: 'close' }), this.hostInstance);
    this.dispatch(req, res).catch((error: unknown) => {
      const problem = problemOf(error);
      if (problem.status >= 500 && problem.code === 'HOST_ERROR') this.log(`operator API: ${req.method ?? '?'} failed: ${error instanceof Error ? error.name : 'error'}`);
      sendProblem(res, problem, this.hostInstance);
    });
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    const method = req.method ?? 'GET';
    const open = this.router.matchPublic(method, target);
    if (open !== undefined) {
      applyPolicy(res, open.route.response);
      return open.handler({ req, res, params: open.params, query: open.query });
    }
    const tokenId = this.access?.tokens.authenticate(req.headers.authorization);
    if (tokenId === undefined) {
      if (!this.anonymous.tryTake()) throw new ApiProblem(429, 'TOO_MANY_REQUESTS', 'too many unauthenticated requests', { 'retry-after': String(this.anonymous.retryAfterSeconds()) });
      throw new ApiProblem(401, 'UNAUTHORIZED');
    }
    const limiter = this.limiterOf(tokenId);
    if (!limiter.tryTake()) throw new ApiProblem(429, 'TOO_MANY_REQUESTS', 'too many requests for this token', { 'retry-after': String(limiter.retryAfterSeconds()) });
    const match = this.router.match(method, target);
    applyPolicy(res, match.route.response);
    await match.handler({ req, res, params: match.params, query: match.query, tokenId });
  }

  private limiterOf(tokenId: string): RateLimiter {
    let limiter = this.perToken.get(tokenId);
    if (limiter === undefined) {
      limiter = new RateLimiter(this.access?.requestsPerSecond ?? 100, this.access?.requestBurst ?? 200, this.scheduler);
      this.perToken.set(tokenId, limiter);
    }
    return limiter;
  }
}

/** Sets the headers a row's policy names; the handler's `writeHead` adds its own. */
function applyPolicy(res: ServerResponse, policy: ResponsePolicy | undefined): void {
  if (policy?.cacheControl !== undefined) res.setHeader('cache-control', policy.cacheControl);
  if (policy?.contentSecurityPolicy !== undefined) res.setHeader('content-security-policy', policy.contentSecurityPolicy);
}
