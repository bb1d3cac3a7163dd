/**
 * The host's own HTTP routes (everything but the executors' registration and upgrade): one route table
 * and one dispatch path for all of its rows. A public row is answered as it is; a token row only for a
 * request an operator token authenticates (never executor credentials), within that token's rate limit,
 * and a request without a token spends the unauthenticated budget first. A `view` token may only GET (and
 * HEAD), and nothing on a row marked `operate` (the file routes): anything else is 403 `FORBIDDEN_ROLE`; a token limited to some environments gets 403
 * `FORBIDDEN_ENVIRONMENT` for a route of any other (whether it exists or not: the answer reveals nothing).
 * A row that takes download tickets (`TokenRoute.ticket`) also accepts a GET whose `?ticket=` its
 * redeemer says stands for a caller (see `./log-tickets`).
 * With `corsOrigins`, the CORS policy of `./cors` comes first. Every error is problem+json.
 */
import { HOST_REPLICA_HEADER } from '../../wire/operator-api';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HostLogger } from '../host-logger';
import { RateLimiter } from '../rate-limiter';
import { Cors } from './cors';
import type { ForwardedCall, Forwarder } from './forwarding';
import { takeForwarded } from './forwarding';
import { TICKET_PARAM } from './log-tickets';
import type { OperatorApiOptions } from './operator-api';
import type { OperatorCaller } from './operator-tokens';
import { mayTouch } from './operator-tokens';
import { ApiProblem, problemOf, sendProblem } from './problem';
import type { AuditAct, AuditNote, ResponsePolicy, Route } from './router';
import { Router } from './router';

/** The options the dispatch path reads: the tokens, the rate limits and the CORS origins (absent: no operator API). */
export type RouteAccess = Pick<OperatorApiOptions, 'tokens' | 'requestsPerSecond' | 'requestBurst' | 'unauthenticatedPerSecond' | 'corsOrigins'>;

/** What the dispatch of one request learnt for the audit trail. */
interface ActSeen {
  act?: AuditAct | undefined;
  environmentId?: string | undefined;
  processId?: string | undefined;
  /** A call another replica forwarded here, signed. */
  forwarded?: ForwardedCall | undefined;
  /** The owner replica this one forwarded the call to. */
  forwardedTo?: string | undefined;
  readonly note: AuditNote;
}

/** The methods a `view` token may call. */
const VIEW_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** The burst of the unauthenticated bucket: two seconds' worth, and at least one request. */
const anonymousBurst = (perSecond: number): number => Math.max(1, perSecond * 2);

/** Serves the rows of the route table on the host's HTTP server. */
export class HostRoutes {
  private readonly router: Router;
  private readonly perToken = new Map<string, RateLimiter>();
  private readonly anonymous: RateLimiter;
  private readonly cors: Cors | undefined;
  private stopping = false;

  constructor(
    rows: readonly Route[],
    private readonly access: RouteAccess | undefined,
    private readonly hostInstance: string,
    private readonly log: HostLogger,
    private readonly scheduler: SchedulerLike = asyncScheduler,
    /** Where each act through the operator API is recorded (see {@link AuditAct}). @default the host's log */
    private readonly audit: HostLogger = log,
    /** With replicas: this replica's id, in every answer's `exec-rx-host-replica` header. @default none */
    private readonly replica?: string,
    /** With replicas that forward: sends an owner-only call to its environment's owner (`./forwarding`). @default none: such calls get 503 */
    private readonly forwarder?: Forwarder,
  ) {
    this.router = new Router(rows);
    const anonymousPerSecond = access?.unauthenticatedPerSecond ?? 20;
    this.anonymous = new RateLimiter(anonymousPerSecond, anonymousBurst(anonymousPerSecond), scheduler);
    const origins = access?.corsOrigins ?? [];
    this.cors = origins.length === 0 ? undefined : new Cors(origins);
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
    if (this.replica !== undefined) res.setHeader(HOST_REPLICA_HEADER, this.replica);
    if (this.stopping && !this.router.answersWhileStopping(req.url ?? '/')) {
      return sendProblem(res, new ApiProblem(503, 'CLOSED', 'the host is stopping; retry shortly', { 'retry-after': '1', connection: 'close' }), this.hostInstance);
    }
    let caller: OperatorCaller | undefined;
    const act: ActSeen = { note: {} };
    this.dispatch(req, res, (who) => (caller = who), act).then(
      () => this.record(req, caller, act, res.statusCode, undefined),
      (error: unknown) => {
        const problem = problemOf(error);
        if (problem.status >= 500 && problem.code === 'HOST_ERROR') {
          const by = caller === undefined ? '' : ` by token ${caller.name}`;
          this.log.error({ tokenName: caller?.name, method: req.method }, `operator API: ${req.method ?? '?'}${by} failed: ${error instanceof Error ? error.name : 'error'}`);
        }
        sendProblem(res, problem, this.hostInstance);
        this.record(req, caller, act, problem.status, problem.code);
      },
    );
  }

  /**
   * The audit trail's line of an act (an authenticated request to a route that names it): the token's name
   * (never the token), the ids, a start's argv (never its env), the client's address and the outcome. A
   * stdin write is recorded at debug level (it is frequent); the other acts at info, or warn when refused.
   * A forwarded act is the owner's to record, with the client's address as the forwarding replica saw it
   * and that replica's id (`forwardedBy`); the forwarding replica records it at debug (`forwardedTo`), or
   * as a refusal when the forward failed.
   */
  private record(req: IncomingMessage, caller: OperatorCaller | undefined, seen: ActSeen, status: number, code: string | undefined): void {
    if (caller === undefined || seen.act === undefined) return;
    const processId = seen.note.processId ?? seen.processId;
    const fields = {
      audit: true,
      act: seen.act,
      tokenName: caller.name,
      environmentId: seen.environmentId,
      processId,
      ...(seen.note.argv === undefined ? {} : { argv: seen.note.argv }),
      ...(seen.note.path === undefined ? {} : { path: seen.note.path }),
      ...(seen.note.destination === undefined ? {} : { destination: seen.note.destination }),
      ...(seen.note.size === undefined ? {} : { size: seen.note.size }),
      ...(seen.note.target === undefined ? {} : { target: seen.note.target }),
      remoteAddress: seen.forwarded?.client ?? req.socket.remoteAddress,
      ...(seen.forwarded === undefined ? {} : { forwardedBy: seen.forwarded.by }),
      ...(seen.forwardedTo === undefined ? {} : { forwardedTo: seen.forwardedTo }),
      status,
      ...(code === undefined ? {} : { code }),
    };
    const target = seen.note.target === undefined ? '' : ` ${seen.note.target}`;
    const paths = `${seen.note.path === undefined ? '' : ` ${seen.note.path}`}${seen.note.destination === undefined ? '' : ` to ${seen.note.destination}`}${target}`;
    const ids = `${processId === undefined ? '' : ` ${processId}`}${paths}${seen.environmentId === undefined ? '' : ` in ${seen.environmentId}`}`;
    const via = seen.forwarded === undefined ? '' : ` (forwarded by ${seen.forwarded.by})`;
    const msg = `audit: ${seen.act}${ids} by ${caller.name}${via}: ${status}${code === undefined ? '' : ` ${code}`}`;
    if (seen.forwardedTo !== undefined && code === undefined) this.audit.debug(fields, `${msg} (forwarded to ${seen.forwardedTo})`);
    else if (seen.act === 'stdin') this.audit.debug(fields, msg);
    else if (status >= 400) this.audit.warn(fields, msg);
    else this.audit.info(fields, msg);
  }

  /** Dispatches one request; `authenticated` hears who the caller is once its token is checked. */
  private async dispatch(req: IncomingMessage, res: ServerResponse, authenticated: (caller: OperatorCaller) => void, seen: ActSeen): Promise<void> {
    const target = req.url ?? '/';
    const method = req.method ?? 'GET';
    if (this.cors?.apply(req, res) === 'answered') return;
    const open = this.router.matchPublic(method, target);
    if (open !== undefined) {
      applyPolicy(res, open.route.response);
      return open.handler({ req, res, params: open.params, query: open.query });
    }
    // Forwarded-identity headers count only when signed with a replica key; stripped from any other call.
    const forwarded = this.forwarder === undefined ? takeForwarded(req, undefined, this.scheduler.now()) : this.forwarder.take(req);
    seen.forwarded = forwarded;
    const caller = forwarded?.caller ?? this.access?.tokens.authenticate(req.headers.authorization) ?? (await this.byTicket(req, method, target));
    if (caller === undefined) {
      if (!this.anonymous.tryTake()) {
        throw new ApiProblem(429, 'TOO_MANY_REQUESTS', 'too many unauthenticated requests', { 'retry-after': String(this.anonymous.retryAfterSeconds()) });
      }
      throw new ApiProblem(401, 'UNAUTHORIZED');
    }
    authenticated(caller);
    // A forwarded call was counted against its token's rate by the replica that got it.
    const limiter = this.limiterOf(caller.name);
    if (forwarded === undefined && !limiter.tryTake()) {
      throw new ApiProblem(429, 'TOO_MANY_REQUESTS', 'too many requests for this token', { 'retry-after': String(limiter.retryAfterSeconds()) });
    }
    const match = this.router.match(method, target);
    const environmentId = match.params['environmentId'];
    const acts: Readonly<Partial<Record<string, AuditAct>>> = match.route.audit ?? {};
    seen.act = acts[method];
    seen.environmentId = environmentId;
    seen.processId = match.params['processId'];
    if (environmentId !== undefined && !mayTouch(caller, environmentId)) {
      throw new ApiProblem(403, 'FORBIDDEN_ENVIRONMENT', `token ${caller.name} may not touch environment ${environmentId}`);
    }
    const viewMay = match.route.operate !== true && (VIEW_METHODS.has(method) || (match.route.reads ?? []).some((read) => read === method));
    if (caller.role === 'view' && !viewMay) {
      throw new ApiProblem(
        403,
        'FORBIDDEN_ROLE',
        `token ${caller.name} has the view role: it may only read, follow, wait and download output (GET, HEAD, POST …/wait, POST …/log/tickets); ` +
          'the file routes need operate, GET too',
      );
    }
    // A call that needs another replica's environment goes to its owner (never a forwarded one again).
    if (this.forwarder !== undefined && forwarded === undefined && environmentId !== undefined && (match.route.owner ?? []).some((m) => m === method)) {
      const owner = await this.forwarder.ownerOf(environmentId);
      if (owner !== undefined) {
        seen.forwardedTo = owner.owner;
        return this.forwarder.forward(req, res, caller, environmentId, owner);
      }
    }
    applyPolicy(res, match.route.response);
    await match.handler({ req, res, params: match.params, query: match.query, caller, audit: seen.note, forwarded: forwarded !== undefined });
  }

  /**
   * The caller a download ticket stands for: only for a GET without `Authorization`, on a row
   * that takes tickets (`TokenRoute.ticket`), which redeems it (once). Anything else, a path the table
   * does not have included, is `undefined` (then 401, revealing nothing).
   */
  private async byTicket(req: IncomingMessage, method: string, target: string): Promise<OperatorCaller | undefined> {
    // Only a GET: a HEAD (a link checker, a download manager's probe) must not use the ticket up.
    if (req.headers.authorization !== undefined || method !== 'GET') return undefined;
    let match;
    try {
      match = this.router.match(method, target);
    } catch {
      return undefined;
    }
    const tickets = match.query.getAll(TICKET_PARAM);
    const [ticket] = tickets;
    if (match.route.ticket === undefined || ticket === undefined || tickets.length !== 1) return undefined;
    return match.route.ticket(ticket, match.params, match.query);
  }

  private limiterOf(name: string): RateLimiter {
    let limiter = this.perToken.get(name);
    if (limiter === undefined) {
      limiter = new RateLimiter(this.access?.requestsPerSecond ?? 100, this.access?.requestBurst ?? 200, this.scheduler);
      this.perToken.set(name, limiter);
    }
    return limiter;
  }
}

/** Sets the headers a row's policy names; the handler's `writeHead` adds its own. */
function applyPolicy(res: ServerResponse, policy: ResponsePolicy | undefined): void {
  if (policy?.cacheControl !== undefined) res.setHeader('cache-control', policy.cacheControl);
  if (policy?.contentSecurityPolicy !== undefined) res.setHeader('content-security-policy', policy.contentSecurityPolicy);
}
