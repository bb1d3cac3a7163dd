/**
 * The rows of the host's route table that anyone may call (`auth: 'public'`: no token, no rate limit):
 * the probes `/healthz` and `/readyz` on every host, and with the operator API its landing page `/` and its OpenAPI document.
 * Each row says what its answers carry (a page's CSP, `Cache-Control`).
 */
import { API_PREFIX, HOST_INSTANCE_HEADER } from '../../wire/operator-api';
import { sendJson } from '../host-http';
import { LANDING_PAGE } from './landing-page';
import { OPENAPI_DOCUMENT } from './openapi';
import type { PublicRoute } from './router';

/** The landing page's policy: its inline script may call the API on this origin and nothing else. */
const LANDING_CSP = "default-src 'self'; script-src 'unsafe-inline'; connect-src 'self'";

/** Why a host does not accept work now (`GET /readyz` answers it, 503): no detail beyond the word. */
export type NotReadyReason = 'starting' | 'stopping' | 'data dir not writable';

/** What `GET /readyz` asks: `undefined` when the host accepts work, else why not. Never rejects. */
export type ReadinessCheck = () => Promise<NotReadyReason | undefined>;

/**
 * The probes, on every host, without a token, answered while the host stops too:
 * - `GET /healthz`: the process is alive and its event loop turns (200 `{"status":"ok"}`, answered on that loop);
 * - `GET /readyz`: the host accepts work (200 `{"status":"ready"}`): it listens, its state is loaded, it is
 *   not stopping and its data dir (if any) is writable; else 503 `{"status":"not ready","reason":…}`.
 * Never cached; they name the host instance like every other answer of the table.
 */
export function probeRoutes(hostInstance: string, readiness: ReadinessCheck): PublicRoute[] {
  const headers = { 'cache-control': 'no-store', [HOST_INSTANCE_HEADER]: hostInstance };
  return [
    {
      path: '/healthz',
      auth: 'public',
      whileStopping: true,
      methods: {
        GET: ({ res }) => {
          sendJson(res, 200, { status: 'ok' }, headers);
          return Promise.resolve();
        },
      },
    },
    {
      path: '/readyz',
      auth: 'public',
      whileStopping: true,
      methods: {
        GET: async ({ res }) => {
          const reason = await readiness();
          if (reason === undefined) sendJson(res, 200, { status: 'ready' }, headers);
          else sendJson(res, 503, { status: 'not ready', reason }, { ...headers, 'retry-after': '1' });
        },
      },
    },
  ];
}

/** The operator API's public rows: the landing page `/` and `/api/v1/openapi.json`, both never cached. */
export function operatorPublicRoutes(hostInstance: string): PublicRoute[] {
  const openapi = JSON.stringify(OPENAPI_DOCUMENT);
  return [
    {
      path: '/',
      auth: 'public',
      response: { cacheControl: 'no-store', contentSecurityPolicy: LANDING_CSP },
      methods: {
        GET: ({ res }) => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(LANDING_PAGE);
          return Promise.resolve();
        },
      },
    },
    {
      path: `${API_PREFIX}/openapi.json`,
      auth: 'public',
      response: { cacheControl: 'no-store' },
      methods: {
        GET: ({ res }) => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(openapi), [HOST_INSTANCE_HEADER]: hostInstance });
          res.end(openapi);
          return Promise.resolve();
        },
      },
    },
  ];
}
