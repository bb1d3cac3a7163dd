/**
 * The operator API's event streams, Server-Sent Events unless a program asked for the binary stream:
 * {@link SseHub} opens each stream (the response headers: the framing the request negotiated, no
 * buffering by proxies, no compression) within the per-token and total limits (`./sse-limits`), pings
 * every open stream with a comment every 15 s (one timer for the host, on its scheduler, running only
 * while a stream is open), and ends them all when the host closes, or a revoked token's.
 * One stream is `./sse-stream`, one part of a multiplexed stream `./sse-channel`.
 */
import type { ServerResponse } from 'node:http';
import type { SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, interval } from 'rxjs';
import { prefersBinaryEvents } from '../../wire/binary-events';
import { HOST_INSTANCE_HEADER } from '../../wire/operator-api';
import type { StreamObserver } from '../metrics/host-metrics';
import { BINARY_FRAMING } from './binary-frames';
import { SSE_FRAMING } from './event-framing';
import { ApiProblem } from './problem';
import type { SseLimits } from './sse-limits';
import { SseStream, UNOBSERVED } from './sse-stream';

/** Opens event streams within the limits and pings them. `close()` ends them all. */
export class SseHub {
  private readonly streams = new Set<SseStream>();
  private readonly perToken = new Map<string, number>();
  private pings: Subscription | undefined;

  constructor(
    private readonly limits: SseLimits,
    private readonly hostInstance: string,
    /** Drives the ping interval. @default asyncScheduler */
    private readonly scheduler: SchedulerLike = asyncScheduler,
    /** Hears each stream open, what is written to it and why it ended (the host's metrics). @default none */
    private readonly observer: StreamObserver = UNOBSERVED,
  ) {}

  /** Open streams (bookkeeping). */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Starts an event stream on `res` (status 200 and the SSE headers) for the token named `tokenId`. Throws ApiProblem 429
   * (`TOO_MANY_STREAMS`, this token holds its share) or 503 (the host holds its total), with `Retry-After`.
   * For a HEAD request the headers are all there is: the stream comes back already ended, holding no place.
   *
   * With `negotiate` (a process's event stream), a request whose `Accept` prefers the binary stream's
   * media type gets it (`wire/binary-events.ts`), and the answer says `Vary: Accept`; anything else, and
   * every stream without `negotiate` (the overview), is SSE.
   */
  open(res: ServerResponse, tokenId: string, negotiate = false): SseStream {
    if ((this.perToken.get(tokenId) ?? 0) >= this.limits.perToken) {
      throw new ApiProblem(429, 'TOO_MANY_STREAMS', `at most ${this.limits.perToken} event streams per token`, { 'retry-after': '5' });
    }
    if (this.streams.size >= this.limits.total) throw new ApiProblem(503, 'TOO_MANY_STREAMS', `at most ${this.limits.total} event streams in all`, { 'retry-after': '5' });
    const head = res.req.method === 'HEAD';
    const framing = negotiate && prefersBinaryEvents(res.req.headers.accept) ? BINARY_FRAMING : SSE_FRAMING;
    res.socket?.setNoDelay(true);
    res.writeHead(200, {
      'content-type': framing.contentType,
      ...(negotiate ? { vary: 'accept' } : {}),
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      'content-encoding': 'identity',
      connection: 'keep-alive',
      [HOST_INSTANCE_HEADER]: this.hostInstance,
      // What a GET's stream is framed with; without it a client reads a HEAD answer as closing the connection.
      ...(head ? { 'transfer-encoding': 'chunked' } : {}),
    });
    res.flushHeaders();
    if (head) {
      const headOnly = new SseStream(res, tokenId, this.limits.bufferBytes, UNOBSERVED, framing);
      headOnly.end();
      return headOnly;
    }
    const stream = new SseStream(res, tokenId, this.limits.bufferBytes, this.observer, framing);
    this.observer.opened();
    this.streams.add(stream);
    this.perToken.set(tokenId, (this.perToken.get(tokenId) ?? 0) + 1);
    this.pings ??= interval(this.limits.pingMs, this.scheduler).subscribe(() => this.pingAll());
    stream.onEnd(() => this.forget(stream));
    return stream;
  }

  /**
   * Ends every stream (the host is closing); with `retryMs`, each with the come-back event first (the host
   * stops and will be back: see {@link SseStream.comeBack}). Returns how many streams it ended.
   */
  close(retryMs?: number): number {
    const open = [...this.streams];
    for (const stream of open) {
      if (retryMs === undefined) stream.end('closed');
      else stream.comeBack(retryMs);
    }
    return open.length;
  }

  /** Ends the streams the tokens named `names` opened (a reload revoked them), each with its last comment; returns how many. */
  revoke(names: ReadonlySet<string>): number {
    const ended = [...this.streams].filter((stream) => names.has(stream.tokenId));
    for (const stream of ended) stream.revoked();
    return ended.length;
  }

  private pingAll(): void {
    for (const stream of this.streams) stream.ping();
  }

  private forget(stream: SseStream): void {
    if (!this.streams.delete(stream)) return;
    const left = (this.perToken.get(stream.tokenId) ?? 1) - 1;
    if (left <= 0) this.perToken.delete(stream.tokenId);
    else this.perToken.set(stream.tokenId, left);
    if (this.streams.size === 0 && this.pings !== undefined) {
      this.pings.unsubscribe();
      this.pings = undefined;
    }
  }
}
