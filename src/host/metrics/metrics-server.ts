/**
 * The host's metrics endpoint: `GET /metrics` (Prometheus text format) on a port of its own, apart from
 * the executors' and the operator API's, with no token (scrapers rarely carry one): it binds the host's
 * address, so off loopback it is reachable wherever the host is; keep that port behind the firewall.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { hostPort } from '../host-http';
import type { ReadinessCheck, TokensDigest } from '../api/routes-public';
import { tokensDigestHeader } from '../api/routes-public';
import type { HostMetrics } from './host-metrics';

/**
 * The probes on the metrics port too (`/healthz`, `/readyz`, as on the host's port, with the operator
 * tokens' digest when `tokensDigest` is given): this port closes last when the host stops, so a probe here
 * sees `/readyz` 503 `stopping` while the host's own port has already stopped listening.
 */
async function answerProbe(res: ServerResponse, path: '/healthz' | '/readyz', readiness: ReadinessCheck, tokensDigest: TokensDigest | undefined): Promise<void> {
  const reason = path === '/healthz' ? undefined : await readiness().catch(() => 'stopping' as const);
  const headers = { 'content-type': 'application/json', 'cache-control': 'no-store', ...tokensDigestHeader(tokensDigest) };
  if (reason === undefined) res.writeHead(200, headers).end(JSON.stringify({ status: path === '/healthz' ? 'ok' : 'ready' }));
  else res.writeHead(503, { ...headers, 'retry-after': '1' }).end(JSON.stringify({ status: 'not ready', reason }));
}

/** The path of the exposition. */
export const METRICS_PATH = '/metrics';

/** A listening metrics endpoint. */
export interface MetricsEndpoint {
  /** Where Prometheus scrapes it: `http(s)://HOST:PORT/metrics`. */
  readonly url: string;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves `metrics` on `host`:`port` (0: a free port), over TLS when `tls` is given, and the probes with
 * `readiness` (their answers carrying `tokensDigest`'s digest when given). Resolves once listening; rejects
 * when the port cannot be bound.
 */
export async function listenForMetrics(
  metrics: HostMetrics,
  host: string,
  port: number,
  tls?: { readonly cert: string | Buffer; readonly key: string | Buffer },
  readiness?: ReadinessCheck,
  tokensDigest?: TokensDigest,
): Promise<MetricsEndpoint> {
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0];
    const probe = readiness !== undefined && (path === '/healthz' || path === '/readyz') && (req.method === 'GET' || req.method === 'HEAD');
    if (probe) return void answerProbe(res, path, readiness, tokensDigest);
    if (path !== METRICS_PATH) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n'),
    );
  };
  const server: Server = tls === undefined ? createServer(onRequest) : createTlsServer({ cert: tls.cert, key: tls.key }, onRequest);
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  server.on('clientError', (_error, socket: Duplex) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  // An invariant: a server listening on a port always has a TCP address.
  if (address === null || typeof address === 'string') throw new Error('metrics server has no TCP address');
  let closing: Promise<void> | undefined;
  return {
    url: `${tls === undefined ? 'http' : 'https'}://${hostPort(host, address.port)}${METRICS_PATH}`,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
