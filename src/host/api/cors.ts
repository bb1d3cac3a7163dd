/**
 * Cross-origin access to the host's routes, for a UI served from another origin (`exec-rx host
 * --cors-origin ORIGIN`). Off by default: a browser page of another origin cannot read the API's answers,
 * and a preflight (`OPTIONS`) is answered like any request without a token (401).
 *
 * With origins listed (exact origins, `scheme://host[:port]`; `*` is refused): a preflight from a listed
 * origin is answered 204 with `Access-Control-Allow-Origin` (that origin), `-Methods`, `-Headers`,
 * `-Max-Age` and `Vary: Origin`, before authentication (a browser sends no `Authorization` on a
 * preflight); a preflight from any other origin is answered 403 `FORBIDDEN_ORIGIN` with no CORS header.
 * Every other answer to a listed origin carries `Access-Control-Allow-Origin` and
 * `Access-Control-Expose-Headers`; every answer carries `Vary: Origin`. The operator API takes bearer
 * tokens, never cookies: there is no `Access-Control-Allow-Credentials`, and a page must hold a token to
 * do anything.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError } from '../../errors';
import { HOST_INSTANCE_HEADER, HOST_REPLICA_HEADER, IDEMPOTENCY_KEY_HEADER } from '../../wire/operator-api';
import { ApiProblem } from './problem';

/** The methods a preflight allows: those the routes have. */
const ALLOW_METHODS = 'GET, HEAD, POST, DELETE';
/** The request headers a preflight allows. */
const ALLOW_HEADERS = ['authorization', 'content-type', IDEMPOTENCY_KEY_HEADER, 'last-event-id', 'accept'].join(', ');
/** The answer headers a page may read. */
const EXPOSE_HEADERS = [HOST_INSTANCE_HEADER, HOST_REPLICA_HEADER, 'idempotent-replayed', 'location', 'retry-after', 'www-authenticate', 'allow'].join(', ');
/** How long a browser may keep a preflight's answer (seconds). */
const MAX_AGE = '600';

/**
 * The origins of `values` (each one origin or a comma list), checked: each an exact `http(s)://host[:port]`
 * origin as a browser sends it (no path, no trailing slash, no query, no `*`). Throws a ConfigError naming
 * the value and what is wrong; duplicates are dropped.
 */
export function parseCorsOrigins(values: readonly string[]): string[] {
  const origins = new Set<string>();
  for (const value of values.flatMap((v) => v.split(','))) {
    const origin = value.trim();
    if (origin === '*' || origin === 'null') throw new ConfigError(`--cors-origin ${origin} is refused: name each origin a UI is served from (e.g. http://127.0.0.1:5173)`);
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new ConfigError(`--cors-origin ${JSON.stringify(origin)} is not an origin: write scheme://host[:port], e.g. http://127.0.0.1:5173`);
    }
    if (parsed.origin !== origin) {
      throw new ConfigError(
        `--cors-origin ${JSON.stringify(origin)} is not a bare origin (no path, query, user or trailing slash; lower case; no default port): did you mean ${parsed.origin}?`,
      );
    }
    origins.add(origin);
  }
  return [...origins];
}

/** What {@link Cors.apply} did: answered a preflight, or set the headers of the answer to come. */
export type CorsOutcome = 'answered' | 'continue';

/** The CORS policy of the host's routes (see the module comment). */
export class Cors {
  private readonly origins: ReadonlySet<string>;

  /** @param origins the allowed origins (throws a ConfigError for one that is not: see {@link parseCorsOrigins}). */
  constructor(origins: readonly string[]) {
    this.origins = new Set(parseCorsOrigins(origins));
  }

  /**
   * Answers a preflight (204 for a listed origin; throws ApiProblem 403 `FORBIDDEN_ORIGIN` for another),
   * or sets the CORS headers of the answer to come and says `continue`.
   */
  apply(req: IncomingMessage, res: ServerResponse): CorsOutcome {
    res.setHeader('vary', 'Origin');
    const origin = req.headers.origin;
    const listed = origin !== undefined && this.origins.has(origin);
    if (req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined) {
      if (!listed) throw new ApiProblem(403, 'FORBIDDEN_ORIGIN', 'this origin is not one of the host\'s --cors-origin');
      res.writeHead(204, {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': ALLOW_HEADERS,
        'access-control-max-age': MAX_AGE,
      });
      res.end();
      return 'answered';
    }
    if (listed) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
    }
    return 'continue';
  }
}
