/**
 * The rows of the host's route table that anyone may call (`auth: 'public'`: no token, no rate limit):
 * the probes `/healthz` and `/readyz` on every host, and with the operator API the dashboard (`/` and its
 * hashed files under `/ui/`, see `./ui-bundle` and docs/dashboard.md), the OpenAPI document and its
 * rendering, the API reference at `/api/v1/docs` (Swagger UI, read-only).
 * Each row says what its answers carry (a page's CSP, `Cache-Control`).
 */
import type { ServerResponse } from 'node:http';
import { API_PREFIX, HOST_INSTANCE_HEADER, TOKENS_DIGEST_HEADER } from '../../wire/operator-api';
import { sendJson } from '../host-http';
import { OPENAPI_DOCUMENT } from './openapi';
import type { PublicRoute, PublicRouteHandler } from './router';
import type { UiBundle } from './ui-bundle';

/**
 * The dashboard's policy: its script and styles from this origin only, its calls to this origin only, no
 * frames, no `<base>`. One exception, `style-src 'unsafe-inline'`: xterm 6 writes its own `<style>`
 * elements and `style` attributes at run time (theme, cell sizes, decorations), which a policy without
 * it blocks (docs/dashboard.md). Scripts stay `'self'` only.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * The API reference's policy (`/api/v1/docs`, Swagger UI): nothing but what the renderer needs, nothing
 * inline, no eval, no frames, no forms, no `<base>`. Beyond `default-src 'none'`: its bundle and our
 * script (`script-src 'self'`), its static stylesheet (`style-src 'self'`; it sets styles through the
 * CSSOM, which a policy does not govern), the document (`connect-src 'self'`), and the icons its CSS
 * inlines as `data:` images (`img-src data:`, also the page's empty favicon). No fonts (its CSS has no
 * `@font-face`). spec/browser/api-docs.spec.ts renders it in Chromium with no violation.
 */
export const API_DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  'img-src data:',
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** `Cache-Control` of the hashed files: their name changes with their content. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/** What `/` answers when the dashboard was not built. */
const NOT_BUILT = 'The exec-rx dashboard is not built: run `npm run build` in the package (it bundles src/ui into dist/ui), then reload.\n';

/** What `/api/v1/docs` answers when the API reference was not built. */
const DOCS_NOT_BUILT = 'The exec-rx API reference is not built: run `npm run build` in the package (it copies Swagger UI into dist/ui/api-docs), then reload.\n';

/** Why a host does not accept work now (`GET /readyz` answers it, 503): no detail beyond the word. */
export type NotReadyReason = 'starting' | 'stopping' | 'draining';

/** What `GET /readyz` asks: `undefined` when the host accepts work, else why not (a phase, or its store's reason, e.g. `data dir not writable`). Never rejects. */
export type ReadinessCheck = () => Promise<string | undefined>;

/** The digest of the operator tokens' set now (`OperatorTokens.setDigest`), read at each probe: a reload changes it. */
export type TokensDigest = () => string;

/** The probes' {@link TOKENS_DIGEST_HEADER}, when the host has operator tokens (`tokensDigest`). */
export const tokensDigestHeader = (tokensDigest: TokensDigest | undefined): Readonly<Record<string, string>> =>
  tokensDigest === undefined ? {} : { [TOKENS_DIGEST_HEADER]: tokensDigest() };

/**
 * The probes, on every host, without a token, answered while the host stops too:
 * - `GET /healthz`: the process is alive and its event loop turns (200 `{"status":"ok"}`, answered on that loop);
 * - `GET /readyz`: the host accepts work (200 `{"status":"ready"}`): it listens, its state is loaded, it is
 *   not stopping and its data dir (if any) is writable; else 503 `{"status":"not ready","reason":…}`.
 * Never cached; they name the host instance like every other answer of the table and, with `tokensDigest`
 * (a host with an operator API), the digest of the operator tokens it accepts now ({@link TOKENS_DIGEST_HEADER}).
 */
export function probeRoutes(hostInstance: string, readiness: ReadinessCheck, tokensDigest?: TokensDigest): PublicRoute[] {
  const headers = (): Readonly<Record<string, string>> => ({ 'cache-control': 'no-store', [HOST_INSTANCE_HEADER]: hostInstance, ...tokensDigestHeader(tokensDigest) });
  return [
    {
      path: '/healthz',
      auth: 'public',
      whileStopping: true,
      methods: {
        GET: ({ res }) => {
          sendJson(res, 200, { status: 'ok' }, headers());
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
          if (reason === undefined) sendJson(res, 200, { status: 'ready' }, headers());
          else sendJson(res, 503, { status: 'not ready', reason }, { ...headers(), 'retry-after': '1' });
        },
      },
    },
  ];
}

/** Answers `status` with `text` (plain, never cached): a page whose files are not built (503), a file not in the set (404). */
function plain(res: ServerResponse, hostInstance: string, status: number, text: string): void {
  const length = Buffer.byteLength(text);
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': length, 'cache-control': 'no-store', [HOST_INSTANCE_HEADER]: hostInstance });
  res.end(text);
}

/** A page: `bundle`'s index.html (its row sets CSP and `no-cache`), or 503 with `unbuilt` when the bundle is not built. */
const pageOf =
  (hostInstance: string, bundle: UiBundle, unbuilt: string): PublicRouteHandler =>
    async ({ res }) => {
      const index = await bundle.index();
      if (index === undefined) return plain(res, hostInstance, 503, unbuilt);
      res.writeHead(200, { 'content-type': index.contentType, 'content-length': index.bytes.length, 'x-content-type-options': 'nosniff', [HOST_INSTANCE_HEADER]: hostInstance });
      res.end(index.bytes);
    };

/** A page's hashed file `{asset}` of `bundle`, cached for a year as {@link IMMUTABLE}; 404 (never cached) for any other name. */
const assetOf =
  (hostInstance: string, bundle: UiBundle): PublicRouteHandler =>
    async ({ res, params }) => {
      const asset = await bundle.asset(params['asset'] ?? '');
      if (asset === undefined) return plain(res, hostInstance, 404, 'not found\n');
      res.writeHead(200, {
        'content-type': asset.contentType,
        'content-length': asset.bytes.length,
        'cache-control': IMMUTABLE,
        'x-content-type-options': 'nosniff',
        [HOST_INSTANCE_HEADER]: hostInstance,
      });
      res.end(asset.bytes);
    };

/** The built sets of files the operator API's pages serve. */
export interface PageBundles {
  /** The dashboard's (`/`, `/ui/{asset}`). */
  readonly dashboard: UiBundle;
  /** The API reference's (`/api/v1/docs`, `/api/v1/docs/{asset}`). */
  readonly apiDocs: UiBundle;
}

/**
 * The operator API's public rows: the dashboard `/` (its index.html, `no-cache`, under its CSP; 503 with
 * a plain page when it is not built), its hashed files `/ui/{asset}` (cached for a year; 404 for any
 * other name), `/api/v1/openapi.json` (never cached), and the API reference `/api/v1/docs` with its
 * files `/api/v1/docs/{asset}` (served alike, under {@link API_DOCS_CSP}).
 */
export function operatorPublicRoutes(hostInstance: string, bundles: PageBundles): PublicRoute[] {
  const openapi = JSON.stringify(OPENAPI_DOCUMENT);
  return [
    {
      path: '/',
      auth: 'public',
      response: { cacheControl: 'no-cache', contentSecurityPolicy: DASHBOARD_CSP },
      methods: { GET: pageOf(hostInstance, bundles.dashboard, NOT_BUILT) },
    },
    { path: '/ui/{asset}', auth: 'public', methods: { GET: assetOf(hostInstance, bundles.dashboard) } },
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
    {
      path: `${API_PREFIX}/docs`,
      auth: 'public',
      response: { cacheControl: 'no-cache', contentSecurityPolicy: API_DOCS_CSP },
      methods: { GET: pageOf(hostInstance, bundles.apiDocs, DOCS_NOT_BUILT) },
    },
    { path: `${API_PREFIX}/docs/{asset}`, auth: 'public', methods: { GET: assetOf(hostInstance, bundles.apiDocs) } },
  ];
}
