/**
 * The host's route table: path templates (`/api/v1/environments/{environmentId}`), each with the methods
 * it has, who may call it (`auth`) and what its answers carry besides the handler's own headers
 * (`response`). Paths are split as sent (no dot-segment resolution, so `..` cannot climb), each `{param}`
 * segment is percent-decoded once and must be a safe id. The table is written by hand; the OpenAPI
 * document describes its rows under `/api/v1` and a spec holds the two together.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isSafeId } from '../../wire/safe-id';
import type { OperatorCaller } from './operator-tokens';
import { ApiProblem } from './problem';

/**
 * The methods a route is written with. HEAD is answered wherever GET is, by GET's handler, unless the row
 * gives HEAD a handler of its own (a file's content: its HEAD never opens the file).
 */
export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/**
 * Who may call a route: `token`, a request an operator token authenticates (within that token's rate
 * limit); `public`, anyone, with no token and no rate limit (a page, a document, a probe).
 */
export type RouteAuth = 'token' | 'public';

/** Headers every answer of a route's handler carries, set before the handler runs. */
export interface ResponsePolicy {
  /** `Cache-Control`. @default none (whatever the handler writes) */
  readonly cacheControl?: string;
  /** `Content-Security-Policy`, for a page. @default none */
  readonly contentSecurityPolicy?: string;
}

/**
 * The methods `route` answers, as `Allow` lists them: its own, with HEAD after GET (RFC 9110 9.3.2: the
 * GET handler answers it; Node's server sends the headers and drops the body of a HEAD answer).
 */
export function methodsOf(route: Route): string[] {
  return Object.keys(route.methods).flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : method === 'HEAD' ? [] : [method]));
}

/** What a public route's handler gets. */
export interface PublicRouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The decoded `{param}` segments. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

/** What a token route's handler gets. */
export interface RouteContext extends PublicRouteContext {
  /** Who the operator token that authenticated the request is: its name, role and environments (never the token). */
  readonly caller: OperatorCaller;
  /** The call was forwarded by another replica, signed (a route only replicas may call checks it). */
  readonly forwarded?: boolean;
  /** What the audit trail's line of an act adds from the handler (a start's new process id and argv); set by the handler. @default none */
  readonly audit?: AuditNote;
}

/** An act through the operator API that the audit trail records (see `TokenRoute.audit`). */
export type AuditAct =
  | 'start'
  | 'stdin'
  | 'stdin end'
  | 'interrupt'
  | 'terminate'
  | 'resize'
  | 'release'
  | 'file write'
  | 'file remove'
  | 'file move'
  | 'file copy'
  | 'mkdir'
  | 'preview link'
  | 'preview share'
  | 'fetch';

/** What a handler tells the audit trail of its act: never an env value, a token, process output or a file's content. */
export interface AuditNote {
  processId?: string;
  argv?: readonly string[];
  /** A file act's path (a copy's or move's source). */
  path?: string;
  /** A copy's or move's destination. */
  destination?: string;
  /** The bytes a file act wrote, or the size of what it removed, copied or moved (as `fs/getMetadata` gave it). */
  size?: number;
  /** An HTTP act's target: a fetch's origin (never its path or query), a preview's port and sharing level or link expiry. */
  target?: string;
}

/** A token route's handler answers the request (or throws an ApiProblem). */
export type RouteHandler = (context: RouteContext) => Promise<void>;

/** A public route's handler answers the request (or throws an ApiProblem). */
export type PublicRouteHandler = (context: PublicRouteContext) => Promise<void>;

/** One path template, for operator tokens only: a row that does not say `auth` is one of these. */
export interface TokenRoute {
  readonly path: string;
  /** @default 'token' */
  readonly auth?: 'token';
  /** Headers its answers carry besides the handler's. @default none */
  readonly response?: ResponsePolicy;
  /**
   * Methods besides GET and HEAD that only read (a `POST …/wait`): a `view` token may use them.
   * @default none
   */
  readonly reads?: readonly HttpMethod[];
  /**
   * Every method needs the `operate` role, GET and HEAD too (a file's bytes and listings are not for a
   * `view` token): `reads` does not apply. @default false
   */
  readonly operate?: boolean;
  /** The methods that are acts the audit trail records, and the act of each. @default none */
  readonly audit?: Readonly<Partial<Record<HttpMethod, AuditAct>>>;
  /**
   * A GET without `Authorization` may present a download ticket in `?ticket=` instead of a
   * token (a browser's navigation carries no header): this redeems it for the caller it stands for, or
   * `undefined` (401). See `./log-tickets`. @default none: a token only
   */
  readonly ticket?: TicketRedeemer;
  /**
   * The methods whose calls need the owner of the path's `{environmentId}` (its executor's socket is
   * there): with replicas that forward (`./forwarding`), a call that lands on another replica is forwarded
   * to the owner before its handler runs. @default none: the replica that got the call answers it
   */
  readonly owner?: readonly HttpMethod[];
  readonly methods: Readonly<Partial<Record<HttpMethod, RouteHandler>>>;
}

/**
 * Redeems a download ticket presented on a route's path (its decoded params and its query): resolves with the caller it
 * stands for, once, or `undefined`. Rejects when the ticket store does not answer (the shared store of replicas).
 */
export type TicketRedeemer = (ticket: string, params: Readonly<Record<string, string>>, query: URLSearchParams) => Promise<OperatorCaller | undefined>;

/** One path template anyone may call (see {@link RouteAuth}). */
export interface PublicRoute {
  readonly path: string;
  readonly auth: 'public';
  /** Answered by its handler while the host stops too (a probe says so itself), instead of 503 `CLOSED`. @default false */
  readonly whileStopping?: boolean;
  /** Headers its answers carry besides the handler's. @default none */
  readonly response?: ResponsePolicy;
  readonly methods: Readonly<Partial<Record<HttpMethod, PublicRouteHandler>>>;
}

/** One row of the table: a path template, its handlers by method, who may call it, what its answers carry. */
export type Route = TokenRoute | PublicRoute;

/** What a request matched: the route, the handler of its method (GET's for HEAD), the params and the query. */
export interface RouteMatch<R extends Route, H> {
  readonly route: R;
  readonly handler: H;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

interface Compiled<R extends Route> {
  readonly segments: readonly string[];
  readonly route: R;
}

/**
 * Matches requests to the table's rows: a public row first, without authentication; then, once the
 * caller authenticated the request, a token row. Throws ApiProblems for what does not match (404, 405, 400).
 */
export class Router {
  private readonly open: readonly Compiled<PublicRoute>[];
  private readonly guarded: readonly Compiled<TokenRoute>[];
  /** The first segments of the token rows' paths (`api`): requests there authenticate before anything else. */
  private readonly guardedAreas: ReadonlySet<string>;

  constructor(
    /** Every row, in the order given (for the OpenAPI spec and `Allow`). */
    readonly routes: readonly Route[],
  ) {
    const compile = <R extends Route>(route: R): Compiled<R> => ({ route, segments: route.path.split('/').slice(1) });
    this.open = routes.filter((route): route is PublicRoute => route.auth === 'public').map(compile);
    this.guarded = routes.filter((route): route is TokenRoute => route.auth !== 'public').map(compile);
    this.guardedAreas = new Set(this.guarded.map((c) => c.segments[0] ?? ''));
  }

  /**
   * Whether the table answers `target` (the rest is the executors'): the path of a public row, or a path
   * whose first segment is a token row's (anything under `/api`), where a request without a token is
   * refused before it learns whether its route exists.
   */
  owns(target: string): boolean {
    const segments = segmentsOf(target);
    return this.open.some((candidate) => fits(candidate.segments, segments)) || this.guardedAreas.has(segments[0] ?? '');
  }

  /** Whether `target` is the path of a public row answered while the host stops (see {@link PublicRoute.whileStopping}). Never throws. */
  answersWhileStopping(target: string): boolean {
    const segments = segmentsOf(target);
    return this.open.some((candidate) => candidate.route.whileStopping === true && fits(candidate.segments, segments));
  }

  /**
   * The public row for `method` on `target` (the request's raw path and query), with GET's handler for
   * HEAD; `undefined` when no public row has that path. Throws ApiProblem 405 (`METHOD_NOT_ALLOWED`,
   * with `Allow`) for a method the row lacks, 400 (`INVALID_ID`) for a parameter that is not a safe id.
   */
  matchPublic(method: string, target: string): RouteMatch<PublicRoute, PublicRouteHandler> | undefined {
    const segments = segmentsOf(target);
    if (hasDotSegment(segments)) return undefined;
    return this.find(this.open, (route, key) => route.methods[key], method, target, segments);
  }

  /**
   * The token row for `method` on `target`, with GET's handler for HEAD. Throws ApiProblem 404
   * (`ROUTE_NOT_FOUND`), 405 (`METHOD_NOT_ALLOWED`, with `Allow`) or 400 (`INVALID_ID` for a parameter
   * that is not a safe id, or a path with `.`/`..` segments).
   */
  match(method: string, target: string): RouteMatch<TokenRoute, RouteHandler> {
    const segments = segmentsOf(target);
    if (hasDotSegment(segments)) throw new ApiProblem(400, 'INVALID_ID', 'a path segment may not be . or ..');
    const found = this.find(this.guarded, (route, key) => route.methods[key], method, target, segments);
    if (found === undefined) throw new ApiProblem(404, 'ROUTE_NOT_FOUND', 'no such route');
    return found;
  }

  /** The first of `candidates` whose template `segments` fit, with `handlerOf` its handler for `method`. */
  private find<R extends Route, H>(
    candidates: readonly Compiled<R>[],
    handlerOf: (route: R, method: HttpMethod) => H | undefined,
    method: string,
    target: string,
    segments: readonly string[],
  ): RouteMatch<R, H> | undefined {
    const queryAt = target.indexOf('?');
    for (const candidate of candidates) {
      const params = matchSegments(candidate.segments, segments);
      if (params === undefined) continue;
      const own = method === 'HEAD' ? handlerOf(candidate.route, 'HEAD') : undefined;
      const handler = own ?? handlerOf(candidate.route, (method === 'HEAD' ? 'GET' : method) as HttpMethod);
      if (handler === undefined) {
        const allow = methodsOf(candidate.route).join(', ');
        throw new ApiProblem(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${candidate.route.path}`, { allow });
      }
      return { route: candidate.route, handler, params, query: new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1)) };
    }
    return undefined;
  }
}

/** The segments of a request target's path (what precedes `?`), split as sent. */
function segmentsOf(target: string): string[] {
  const queryAt = target.indexOf('?');
  return (queryAt < 0 ? target : target.slice(0, queryAt)).split('/').slice(1);
}

const hasDotSegment = (segments: readonly string[]): boolean => segments.some((segment) => segment === '.' || segment === '..');

/** Whether `actual` has the shape of `template`: as many segments, the same literal ones (params unchecked). */
function fits(template: readonly string[], actual: readonly string[]): boolean {
  return template.length === actual.length && template.every((want, i) => want.startsWith('{') || want === actual[i]);
}

/** The decoded params when `actual` fits `template`; `undefined` when it does not; throws for a bad id. */
function matchSegments(template: readonly string[], actual: readonly string[]): Record<string, string> | undefined {
  if (template.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i += 1) {
    const want = template[i] ?? '';
    const got = actual[i] ?? '';
    if (!want.startsWith('{')) {
      if (want !== got) return undefined;
      continue;
    }
    const value = decodeSegment(got);
    if (value === undefined || !isSafeId(value)) throw new ApiProblem(400, 'INVALID_ID', `${want.slice(1, -1)} must be letters, digits, '.', '_' or '-' (at most 128)`);
    params[want.slice(1, -1)] = value;
  }
  return params;
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
