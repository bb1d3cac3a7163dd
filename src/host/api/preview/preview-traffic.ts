/**
 * One preview request's trip through the executor (`http/request` with `streamResponse`, to
 * `http://127.0.0.1:{port}` of the environment), and what all of them share: a per-environment line for
 * requests waiting for their head (each holds a slot of the executor's request line until it comes,
 * docs/protocol.md#http-requests), a cap on bodies streaming per environment, and the open streams, which a
 * token's revocation or the host's stop ends.
 *
 * The executor offers no flow control for one request (pausing its socket stalls every process on it)
 * and no way to stop one: a body flows at the target's pace into a bounded buffer (the response's
 * writable buffer); a browser that falls `bufferBytes` behind is cut, and a closed tab stops the host
 * listening while the executor reads on until the body ends, its `timeoutMs`, or the connection closes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SchedulerLike, Subscription } from 'rxjs';
import { firstValueFrom, timer } from 'rxjs';
import type { Environment } from '../../../environment/environment';
import { RpcError } from '../../../errors';
import type { HttpTargetPolicy } from '../../../http/target-policy';
import type { HttpEvent } from '../../../http/http-types';
import type { HttpHeader } from '../../../wire/http';
import { FairQueue } from '../files/fair-queue';
import { bodyTooLarge } from '../json-body';
import { ApiProblem } from '../problem';
import type { HttpSettings } from './http-settings';
import { MAX_PORT_WAIT_MS } from './http-settings';
import type { InboundFacts } from './preview-headers';
import { inboundHeaders, outboundHeaders } from './preview-headers';

/** How a preview request ended, for the metrics. */
export type PreviewOutcome = 'answered' | 'refused' | 'cut' | 'client' | 'overflow' | 'revoked' | 'closed';

/** What the host's metrics hear of previews and fetches. */
export interface PreviewObserver {
  /** A request ended: `status` the status sent (0 when none was), `outcome` how. */
  ended(kind: 'preview' | 'fetch', status: number, outcome: PreviewOutcome): void;
}

/** One request to pass to the environment. */
export interface PreviewCall {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly facts: InboundFacts;
  /** Whose grant or token opened it (a revocation of that name ends it); `undefined` for a public port. */
  readonly who: string | undefined;
}

/** The query parameter (stripped before the target sees it) and header that ask to wait for the port, in seconds (at most 30). */
export const WAIT_PARAM = 'exec-rx-wait-for-port';

/** How often a wait for the port tries again. */
const PORT_RETRY_MS = 500;

/** One request as it goes to the executor. */
interface OutgoingPreview {
  readonly method: string;
  readonly url: string;
  readonly headers: HttpHeader[];
  readonly body: Buffer | undefined;
  readonly timeoutMs: number;
}

interface OpenStream {
  readonly environmentId: string;
  readonly who: string | undefined;
  readonly cut: (outcome: PreviewOutcome) => void;
}

/** The shared part of every preview (see the module's doc). Built by `HostPreviews`; `close()` ends every stream. */
export class PreviewTraffic {
  private readonly queues = new Map<string, FairQueue>();
  private readonly open = new Set<OpenStream>();

  constructor(
    private readonly settings: HttpSettings,
    private readonly policy: HttpTargetPolicy,
    private readonly environmentOf: (environmentId: string) => Environment,
    private readonly scheduler: SchedulerLike,
    private readonly observer?: PreviewObserver,
  ) {}

  /** Bodies streaming now, in all. */
  get streams(): number {
    return this.open.size;
  }

  /** Ends the streams opened by the names in `names` (their token was revoked). */
  revoke(names: ReadonlySet<string>): void {
    for (const stream of [...this.open]) if (stream.who !== undefined && names.has(stream.who)) stream.cut('revoked');
  }

  /** Ends every stream (the host stops). */
  close(): void {
    for (const stream of [...this.open]) stream.cut('closed');
  }

  /**
   * Passes the request to the target and streams its answer back. Resolves once the answer ended, was cut
   * or the client left; rejects with an ApiProblem before anything was sent: 413 `BODY_TOO_LARGE`, 503
   * `PREVIEW_BUSY`, 502 `PREVIEW_PORT_CLOSED` (nothing answered on the port, after the wait asked for),
   * 504 `PREVIEW_TIMEOUT`, or the environment's own (404, 503).
   */
  async pass(call: PreviewCall): Promise<void> {
    const { req, facts } = call;
    const { address } = facts;
    const { rest, waitMs } = takeWait(address.rest, req.headers[WAIT_PARAM]);
    const body = await readBody(req, this.settings.maxBodyBytes);
    const environment = this.environmentOf(address.environmentId);
    if (this.streamsOf(address.environmentId) >= this.settings.streamsPerEnvironment) {
      const busy = `environment ${address.environmentId} has ${this.settings.streamsPerEnvironment} preview bodies streaming already; retry`;
      throw new ApiProblem(503, 'PREVIEW_BUSY', busy, { 'retry-after': '1' });
    }
    const url = this.policy.check(`http://127.0.0.1:${address.port}${rest}`).href;
    const accept = req.headers.accept ?? '';
    const timeoutMs = accept.includes('text/event-stream') ? this.settings.streamTimeoutMs : this.settings.timeoutMs;
    const started = this.scheduler.now();
    const retries = (req.method === 'GET' || req.method === 'HEAD') && waitMs > 0;
    for (;;) {
      try {
        return await this.exchange(environment, call, { method: req.method ?? 'GET', url, headers: inboundHeaders(req.rawHeaders, facts), body, timeoutMs });
      } catch (error: unknown) {
        const elapsed = this.scheduler.now() - started;
        if (!(error instanceof RpcError) || !error.rpcMessage.startsWith('http/request failed')) throw error;
        if (elapsed >= Math.min(timeoutMs, this.settings.timeoutMs) - 100) throw timedOut(address.environmentId, address.port, this.settings.timeoutMs);
        if (retries && elapsed + PORT_RETRY_MS < waitMs && !call.res.destroyed) {
          await firstValueFrom(timer(PORT_RETRY_MS, this.scheduler));
          continue;
        }
        const waited = retries ? ` (waited ${Math.round(elapsed / 1000)} s)` : ` (add ?${WAIT_PARAM}=30 to wait for it)`;
        throw new ApiProblem(502, 'PREVIEW_PORT_CLOSED', `nothing answered on port ${address.port} in environment ${address.environmentId}${waited}: ${error.rpcMessage}`);
      }
    }
  }

  /**
   * A slot of `environmentId`'s line for one request waiting for its head: resolves, once its turn came,
   * with the function that frees it (call it when the head came or the request failed). The fetch route's
   * hops take theirs through it (`execFetch`'s `acquire`).
   */
  headSlot(environmentId: string, signal?: AbortSignal): () => Promise<() => void> {
    const lane = this.queueOf(environmentId).lane(signal);
    return () =>
      new Promise<() => void>((acquired, refused) => {
        lane.run(() => new Promise<void>((release) => acquired(release))).catch(refused);
      });
  }

  private streamsOf(environmentId: string): number {
    let count = 0;
    for (const stream of this.open) if (stream.environmentId === environmentId) count++;
    return count;
  }

  private queueOf(environmentId: string): FairQueue {
    let queue = this.queues.get(environmentId);
    if (queue === undefined) {
      queue = new FairQueue(this.settings.requestsInFlight);
      this.queues.set(environmentId, queue);
    }
    return queue;
  }

  /**
   * One `http/request`: waits its turn in the environment's line and holds its slot until the executor
   * answers the head or fails the request (what holds the executor's line, whatever the client does
   * meanwhile), answers the head, streams the body. Rejects before the head was answered (nothing sent to
   * the client: the executor's failure, or 504 at the host's own bound); after it, every failure cuts the
   * response. A client that leaves, or a 504 answered first, stops the host listening once the executor's
   * head or failure comes.
   */
  private exchange(environment: Environment, call: PreviewCall, request: OutgoingPreview): Promise<void> {
    const { res, facts } = call;
    const { environmentId, port } = facts.address;
    return new Promise<void>((resolve, reject) => {
      /** The client's side: settled once (answered, cut, refused, or the client left). */
      let settled = false;
      let headSent = false;
      /** The executor's side: its head or failure came (the line's slot is free then). */
      let headCame = false;
      let subscription: Subscription | undefined;
      let freeSlot: (() => void) | undefined;
      const stream: OpenStream = { environmentId, who: call.who, cut: (outcome) => settle(outcome) };
      const executorDone = (): void => {
        headCame = true;
        freeSlot?.();
      };
      const settle = (outcome: PreviewOutcome, error?: unknown): void => {
        if (settled) return;
        settled = true;
        this.open.delete(stream);
        headDeadline.unsubscribe();
        // Before the executor's head or failure, it still holds the line for this request: listen on until
        // then (the head or the failure frees the slot, and the head ends the listening: see onEvent).
        if (headCame) subscription?.unsubscribe();
        if (!headSent) {
          // A refusal is counted by whoever answers it (`HostPreviews.handle`); a client gone before the head here.
          if (error === undefined) this.observer?.ended('preview', 0, outcome);
          return error === undefined ? resolve() : reject(error);
        }
        if (outcome === 'answered') res.end();
        else res.destroy();
        this.observer?.ended('preview', res.statusCode, outcome);
        resolve();
      };
      // The host's own bound on the head (the executor's `timeoutMs` may be longer: an event stream's).
      const headDeadline = timer(this.settings.timeoutMs + 1000, this.scheduler).subscribe(() => {
        if (!headSent) settle('refused', timedOut(environmentId, port, this.settings.timeoutMs));
      });
      res.once('close', () => {
        if (!res.writableFinished) settle('client');
      });
      const onEvent = (event: HttpEvent): void => {
        if (event.type === 'head') {
          executorDone();
          if (settled) return subscription?.unsubscribe();
          headSent = true;
          this.open.add(stream);
          res.writeHead(event.status, outboundHeaders(event.headers, facts.address).flat());
          return;
        }
        if (settled) return;
        res.write(event.chunk);
        if (res.writableLength > this.settings.bufferBytes) settle('overflow');
      };
      const send = (): Promise<void> =>
        new Promise<void>((release) => {
          freeSlot = release;
          if (settled) return release();
          const { body, ...rest } = request;
          subscription = environment
            .getHttpClient()
            .stream({ ...rest, redirectPolicy: 'stop', ...(body === undefined ? {} : { body }) }, { timeoutMs: request.timeoutMs + 5000 })
            .subscribe({
              next: onEvent,
              error: (error: unknown) => {
                executorDone();
                settle(headSent ? 'cut' : 'refused', error);
              },
              complete: () => {
                executorDone();
                settle('answered');
              },
            });
        });
      this.queueOf(environmentId)
        .lane()
        .run(send, { abortable: false })
        .catch((error: unknown) => settle('refused', error));
    });
  }
}

/** The rest without the wait parameter, and the wait asked for (query or header), in ms (at most 30 s). */
function takeWait(rest: string, header: string | string[] | undefined): { rest: string; waitMs: number } {
  const queryAt = rest.indexOf('?');
  let seconds = typeof header === 'string' ? Number(header) : 0;
  if (queryAt < 0) return { rest, waitMs: clampWait(seconds) };
  const query = new URLSearchParams(rest.slice(queryAt + 1));
  const asked = query.get(WAIT_PARAM);
  if (asked === null) return { rest, waitMs: clampWait(seconds) };
  seconds = Number(asked);
  query.delete(WAIT_PARAM);
  const left = query.toString();
  return { rest: `${rest.slice(0, queryAt)}${left === '' ? '' : `?${left}`}`, waitMs: clampWait(seconds) };
}

const clampWait = (seconds: number): number => (Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, MAX_PORT_WAIT_MS) : 0);

const timedOut = (environmentId: string, port: number, timeoutMs: number): ApiProblem =>
  new ApiProblem(504, 'PREVIEW_TIMEOUT', `port ${port} in environment ${environmentId} sent no answer within ${timeoutMs} ms`);

/** The request's body (undefined for none), at most `limit` bytes: past it, 413 (the rest drained, bounded). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  const detail = `a request body passed to an environment is at most ${limit} bytes (one executor message carries it whole)`;
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(bodyTooLarge(req, detail));
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return Promise.resolve(undefined);
  return new Promise<Buffer | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData);
      reject(bodyTooLarge(req, detail, size));
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}
