/**
 * A fake environment registry for the direct remote transport (docs/protocol.md#registration): an HTTP
 * server on 127.0.0.1:0 that answers `POST /cloud/environment/{id}/direct/register` with the acceptor URL
 * the spec chooses, and records every request so specs can assert on bodies and SigV4 headers.
 */
import { createServer } from 'node:http';
import { listenOnLoopback } from './listen-on-loopback';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

/** One request the stub received. `body` is the raw text. */
export interface RegistryRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A canned answer. An object `body` is sent as JSON, a string as is. */
export interface RegistryResponse {
  readonly status: number;
  readonly body: unknown;
}

/** How the stub answers. */
export interface RegistryStubOptions {
  /** The WebSocket URL handed to the executor for its `registrationNo`-th registration (1-based). */
  readonly acceptorUrl: (environmentId: string, registrationNo: number) => string;
  /**
   * Override the answer to a request (e.g. a 503 at startup). Return `undefined` for the default:
   * the registration document for register POSTs, 404 for anything else.
   */
  readonly respond?: (request: RegistryRequest, registrationNo: number) => RegistryResponse | undefined;
}

/** A running registry stub. Close it in `afterAll`/`afterEach` (or hand it to the tracker). */
export interface RegistryStub {
  /** `http://127.0.0.1:PORT`, the `--remote` base URL. */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly posts: readonly RegistryRequest[];
  /** Resolves with `posts` once at least `count` requests arrived; rejects after `timeoutMs` or on close. */
  waitForPosts(count: number, timeoutMs?: number): Promise<readonly RegistryRequest[]>;
  /** Stops listening and destroys every connection (the executor keeps HTTP connections alive). */
  close(): Promise<void>;
}

const REGISTER_PATH = /^\/cloud\/environment\/([^/]+)\/direct\/register$/;

interface Waiter {
  readonly count: number;
  readonly resolve: (posts: readonly RegistryRequest[]) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** Starts a registry stub on 127.0.0.1:0. */
export async function startRegistryStub(options: RegistryStubOptions): Promise<RegistryStub> {
  const posts: RegistryRequest[] = [];
  const waiters = new Set<Waiter>();
  let registrations = 0;

  const answer = (request: RegistryRequest): RegistryResponse => {
    const match = REGISTER_PATH.exec(request.path);
    const registrationNo = match === null || request.method !== 'POST' ? 0 : ++registrations;
    const custom = options.respond?.(request, registrationNo);
    if (custom !== undefined) return custom;
    if (match === null || registrationNo === 0) return { status: 404, body: { error: 'not found' } };
    const environmentId = decodeURIComponent(match[1] ?? '');
    return {
      status: 200,
      body: {
        environment_id: environmentId,
        transport: 'direct_jsonrpc_v1',
        registration_id: `reg-${registrationNo}`,
        url: options.acceptorUrl(environmentId, registrationNo),
      },
    };
  };

  const settleWaiters = (): void => {
    for (const waiter of waiters) {
      if (posts.length < waiter.count) continue;
      clearTimeout(waiter.timer);
      waiters.delete(waiter);
      waiter.resolve([...posts]);
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: RegistryRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      posts.push(request);
      const { status, body } = answer(request);
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json' }).end(text);
      settleWaiters();
    });
  };

  const server = createServer(handle);
  const port = await listenOnLoopback(server, 'registry stub');

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    waitForPosts: (count, timeoutMs = 10_000) => {
      if (posts.length >= count) return Promise.resolve([...posts]);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`registry stub: ${posts.length} of ${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter: Waiter = { count, resolve, reject, timer };
        waiters.add(waiter);
      });
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const waiter of waiters) {
          clearTimeout(waiter.timer);
          waiter.reject(new Error('registry stub closed'));
        }
        waiters.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
