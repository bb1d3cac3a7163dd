/**
 * The rows of the host's route table that anyone may call (`auth: 'public'`: no token, no rate limit):
 * `/readyz` on every host, and with the operator API its landing page `/` and its OpenAPI document.
 * Each row says what its answers carry (a page's CSP, `Cache-Control`).
 */
import { API_PREFIX, HOST_INSTANCE_HEADER } from '../../wire/operator-api';
import { sendJson } from '../host-http';
import { LANDING_PAGE } from './landing-page';
import { OPENAPI_DOCUMENT } from './openapi';
import type { PublicRoute } from './router';

/** The landing page's policy: its inline script may call the API on this origin and nothing else. */
const LANDING_CSP = "default-src 'self'; script-src 'unsafe-inline'; connect-src 'self'";

/** `GET /readyz`: the host is up (`{"status":"ready"}`), for a load balancer or an orchestrator. */
export const READINESS_ROUTE: PublicRoute = {
  path: '/readyz',
  auth: 'public',
  methods: {
    GET: ({ res }) => {
      sendJson(res, 200, { status: 'ready' });
      return Promise.resolve();
    },
  },
};

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
