/**
 * The operator API's routing: a table of path templates (`/api/v1/environments/{environmentId}`) and the
 * methods each has. Paths are split as sent (no dot-segment resolution, so `..` cannot climb), each
 * `{param}` segment is percent-decoded once and must be a safe id. The table is written by hand; the
 * OpenAPI document describes it and a spec holds the two together.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isSafeId } from '../../wire/safe-id';
import { ApiProblem } from './problem';

/** The methods a route is written with (HEAD is answered wherever GET is, by GET's handler). */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/**
 * The methods `route` answers, as `Allow` lists them: its own, with HEAD after GET (RFC 9110 9.3.2: the
 * GET handler answers it; Node's server sends the headers and drops the body of a HEAD answer).
 */
export function methodsOf(route: Route): string[] {
  return Object.keys(route.methods).flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
}

/** What a handler gets. */
export interface RouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The decoded `{param}` segments. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Which operator token authenticated the request (an opaque id, never the token). */
  readonly tokenId: string;
}

/** A handler answers the request (or throws an ApiProblem). */
export type RouteHandler = (context: RouteContext) => Promise<void>;

/** One path template and its handlers by method. */
export interface Route {
  readonly path: string;
  readonly methods: Readonly<Partial<Record<HttpMethod, RouteHandler>>>;
}

/** What a request matched. */
export type RouteMatch = { readonly handler: RouteHandler; readonly params: Readonly<Record<string, string>>; readonly query: URLSearchParams };

interface Compiled {
  readonly segments: readonly string[];
  readonly route: Route;
}

/** Matches requests to routes; throws ApiProblems for what does not match (404, 405, 400). */
export class Router {
  private readonly compiled: readonly Compiled[];

  constructor(routes: readonly Route[]) {
    this.compiled = routes.map((route) => ({ route, segments: route.path.split('/').slice(1) }));
  }

  /** Every path template with its methods (for the OpenAPI spec and `Allow`). */
  get routes(): readonly Route[] {
    return this.compiled.map((c) => c.route);
  }

  /**
   * The handler for `method` on `target` (the request's raw path and query); for HEAD, GET's. Throws ApiProblem 404
   * (`ROUTE_NOT_FOUND`), 405 (`METHOD_NOT_ALLOWED`, with `Allow`) or 400 (`INVALID_ID` for a parameter
   * that is not a safe id, or a path with `.`/`..` segments).
   */
  match(method: string, target: string): RouteMatch {
    const queryAt = target.indexOf('?');
    const path = queryAt < 0 ? target : target.slice(0, queryAt);
    const query = new URLSearchParams(queryAt < 0 ? '' : target.slice(queryAt + 1));
    const segments = path.split('/').slice(1);
    if (segments.some((segment) => segment === '.' || segment === '..')) throw new ApiProblem(400, 'INVALID_ID', 'a path segment may not be . or ..');
    for (const candidate of this.compiled) {
      const params = matchSegments(candidate.segments, segments);
      if (params === undefined) continue;
      const handler = candidate.route.methods[(method === 'HEAD' ? 'GET' : method) as HttpMethod];
      if (handler === undefined) {
        const allow = methodsOf(candidate.route).join(', ');
        throw new ApiProblem(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${candidate.route.path}`, { allow });
      }
      return { handler, params, query };
    }
    throw new ApiProblem(404, 'ROUTE_NOT_FOUND', 'no such route');
  }
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
