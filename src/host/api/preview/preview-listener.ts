/**
 * The preview listener (`--preview-port`): an HTTP(S) server of its own on the host's address, so that a
 * previewed page never shares an origin with the operator API or the dashboard (whose token is in the
 * dashboard origin's `sessionStorage`). Every request goes to `HostPreviews.handle`, every WebSocket
 * upgrade to `HostPreviews.onUpgrade` (refused: `http/request` cannot carry one).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { SchedulerLike } from 'rxjs';
import { startBodyDeadline } from '../../body-deadline';
import { createServer as createTlsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { hostPort } from '../../host-http';
import type { HostPreviews } from './host-previews';

/** A listening preview endpoint. */
export interface PreviewEndpoint {
  /** Its base url: `http(s)://HOST:PORT`. */
  readonly url: string;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}

/** Serves `previews` on `host`:`port` (0: a free port), over TLS when `tls` is given. Resolves once listening; rejects when the port cannot be bound. */
export async function listenForPreviews(
  previews: HostPreviews,
  host: string,
  port: number,
  tls: { readonly cert: string | Buffer; readonly key: string | Buffer } | undefined,
  scheme: 'http' | 'https',
  scheduler: SchedulerLike,
): Promise<PreviewEndpoint> {
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // A request's body, bounded in bytes, is bounded in time too (the host's own port does the same).
    startBodyDeadline(req, res, scheduler);
    previews.handle(req, res);
  };
  const server: Server = tls === undefined ? createServer(onRequest) : createTlsServer({ cert: tls.cert, key: tls.key }, onRequest);
  server.headersTimeout = 10_000;
  // A request body is bounded in bytes (the preview's limit); a streamed answer may last the stream bound.
  server.requestTimeout = 0;
  server.on('upgrade', previews.onUpgrade.bind(previews));
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
  if (address === null || typeof address === 'string') throw new Error('preview server has no TCP address');
  previews.listening({ scheme, hostPort: hostPort(host, address.port), port: address.port });
  let closing: Promise<void> | undefined;
  return {
    url: `${scheme}://${hostPort(host, address.port)}`,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
