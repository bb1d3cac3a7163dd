/**
 * Server-Sent Events for the operator API: the response headers (no buffering by proxies, no
 * compression), a bounded send buffer per subscriber, a comment ping every 15 s on every open stream
 * (one timer for the host, on its scheduler, running only while a stream is open), the per-token and
 * total limits, and the end of a revoked token's streams.
 */
import type { ServerResponse } from 'node:http';
import type { SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, interval } from 'rxjs';
import { HOST_INSTANCE_HEADER, RESTART_EVENT } from '../../wire/operator-api';
import type { StreamEndReason, StreamObserver } from '../metrics/host-metrics';
import { ApiProblem } from './problem';

/** Limits of the host's event streams. */
export interface SseLimits {
  /** Bytes a subscriber may have waiting to be sent; past it its stream ends (it resumes by seq). */
  readonly bufferBytes: number;
  /** Streams one operator token may hold open; beyond, 429. */
  readonly perToken: number;
  /** Streams open in all; beyond, 503. */
  readonly total: number;
  /** Interval of the `: ping` comment. */
  readonly pingMs: number;
}

/** Default {@link SseLimits}: 1 MiB, 256 per token, 1024 in all, a ping every 15 s. */
export const DEFAULT_SSE_LIMITS: SseLimits = { bufferBytes: 1024 * 1024, perToken: 256, total: 1024, pingMs: 15_000 };

const PING = Buffer.from(': ping\n\n');

/** An observer that hears nothing. */
const UNOBSERVED: StreamObserver = { opened: () => undefined, sent: () => undefined, ended: () => undefined };

/** The come-back frame of {@link SseStream.comeBack} (exported for the spec that checks it against the OpenAPI document). */
export const comeBackFrame = (retryMs: number): Buffer => Buffer.from(`retry: ${retryMs}\nevent: ${RESTART_EVENT}\ndata: ${JSON.stringify({ retryMs })}\n\n`, 'utf8');

/**
 * The last bytes of a stream whose token a reload revoked: an SSE comment (every client skips it) that says
 * why to whoever reads the raw stream; the client's reconnect then gets 401 `UNAUTHORIZED`.
 */
const REVOKED_FRAME = Buffer.from(': the operator token of this stream was revoked\n\n');

/**
 * What a process's event pump (`./process-event-stream`, `./log-event-stream`) writes to: a whole
 * {@link SseStream}, or one {@link SseChannel} of a stream that carries more (the multiplexed overview).
 */
export interface EventSink {
  /** Bytes waiting to be sent on the connection. */
  readonly buffered: number;
  /** A replay pauses at this many bytes waiting and goes on after the next drain. */
  readonly highWater: number;
  /** The sink ended: nothing more is written to it. */
  readonly isEnded: boolean;
  /** Writes one whole frame; `false` when the sink ended (or ends now: past the connection's bound). */
  write(frame: Buffer): boolean;
  /** Ends the sink (idempotent); `reason` is what the metrics count when it ends the connection. */
  end(reason?: StreamEndReason): void;
  /** Runs `listener` once, when the sink ends for any reason (at once if it already has). */
  onEnd(listener: () => void): void;
  /** Runs `listener` once, at the connection's next `drain`; returns the function that cancels it. */
  onDrain(listener: () => void): () => void;
}

/** One open event stream. `write` refuses (and ends the stream) past the buffer bound. */
export class SseStream implements EventSink {
  private ended = false;
  private readonly endListeners: (() => void)[] = [];

  constructor(
    readonly res: ServerResponse,
    /** The name of the token that opened it. */
    readonly tokenId: string,
    private readonly bufferBytes: number,
    /** Hears the bytes written and why the stream ended. @default none */
    private readonly observer: StreamObserver = UNOBSERVED,
  ) {
    res.once('close', () => this.finish('client'));
  }

  /** Bytes waiting in this response's buffer. */
  get buffered(): number {
    return this.res.writableLength;
  }

  /** The stream ended (by us, the bound, or the client going away). */
  get isEnded(): boolean {
    return this.ended;
  }

  /** Half the bound: a replay pauses here and waits for `drain` before it goes on. */
  get highWater(): number {
    return this.bufferBytes >> 1;
  }

  /**
   * Writes one whole frame; `false` (and the stream ends) when it would take the buffer past the bound,
   * or the stream already ended. A frame is never cut: what the client got ends at an event boundary.
   */
  write(frame: Buffer): boolean {
    if (this.ended) return false;
    if (this.res.writableLength + frame.byteLength > this.bufferBytes) {
      this.end('overflow');
      return false;
    }
    this.send(frame);
    return true;
  }

  /** The comment ping (skipped when the buffer is already over half the bound). */
  ping(): void {
    if (!this.ended && this.res.writableLength < this.highWater) this.send(PING);
  }

  /**
   * Ends the stream with the come-back event (`retry:` and `event: restart`, data `{"retryMs": …}`): the
   * host stops, the client reconnects after `retryMs`. Written whatever the buffer holds (it is small);
   * nothing follows it. Idempotent, like {@link end}.
   */
  comeBack(retryMs: number): void {
    if (this.ended) return;
    this.send(comeBackFrame(retryMs));
    this.end('restart');
  }

  /**
   * Ends the stream because its token was revoked (a reload): a last comment line says so, nothing
   * follows it. Idempotent, like {@link end}.
   */
  revoked(): void {
    if (this.ended) return;
    this.send(REVOKED_FRAME);
    this.end('revoked');
  }

  /** Ends the response (idempotent); `reason` is what the metrics count it as. */
  end(reason: StreamEndReason = 'completed'): void {
    if (this.ended) return;
    this.res.end();
    this.finish(reason);
  }

  /** Runs `listener` once, when the stream ends for any reason (at once if it already has). */
  onEnd(listener: () => void): void {
    if (this.ended) listener();
    else this.endListeners.push(listener);
  }

  /** Runs `listener` once at the response's next `drain`; returns the function that cancels it. */
  onDrain(listener: () => void): () => void {
    this.res.once('drain', listener);
    return () => void this.res.off('drain', listener);
  }

  private send(frame: Buffer): void {
    this.res.write(frame);
    this.observer.sent(frame.byteLength);
  }

  private finish(reason: StreamEndReason): void {
    if (this.ended && this.endListeners.length === 0) return;
    if (!this.ended) this.observer.ended(reason);
    this.ended = true;
    const listeners = this.endListeners.splice(0);
    for (const listener of listeners) listener();
  }
}

/**
 * One part of a stream that carries more than one (the overview and a process's events): what the
 * process's pump writes to. Ending it (after `closed` or `failed`) ends only the part; the stream goes
 * on. What is a failure of the connection ends the stream itself: a write past its bound (the client
 * resumes by seq), a stall. The stream's end ends the channel.
 */
export class SseChannel implements EventSink {
  private ended = false;
  private readonly endListeners: (() => void)[] = [];

  constructor(private readonly parent: SseStream) {
    parent.onEnd(() => this.finish());
  }

  get buffered(): number {
    return this.parent.buffered;
  }

  get highWater(): number {
    return this.parent.highWater;
  }

  get isEnded(): boolean {
    return this.ended || this.parent.isEnded;
  }

  write(frame: Buffer): boolean {
    return !this.ended && this.parent.write(frame);
  }

  /** Ends the part; a `stalled` or `overflow` end is the connection's, and ends the stream. */
  end(reason: StreamEndReason = 'completed'): void {
    if (reason === 'stalled' || reason === 'overflow') this.parent.end(reason);
    this.finish();
  }

  onEnd(listener: () => void): void {
    if (this.isEnded) listener();
    else this.endListeners.push(listener);
  }

  onDrain(listener: () => void): () => void {
    return this.parent.onDrain(listener);
  }

  private finish(): void {
    this.ended = true;
    const listeners = this.endListeners.splice(0);
    for (const listener of listeners) listener();
  }
}

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
   */
  open(res: ServerResponse, tokenId: string): SseStream {
    if ((this.perToken.get(tokenId) ?? 0) >= this.limits.perToken) {
      throw new ApiProblem(429, 'TOO_MANY_STREAMS', `at most ${this.limits.perToken} event streams per token`, { 'retry-after': '5' });
    }
    if (this.streams.size >= this.limits.total) throw new ApiProblem(503, 'TOO_MANY_STREAMS', `at most ${this.limits.total} event streams in all`, { 'retry-after': '5' });
    const head = res.req.method === 'HEAD';
    res.socket?.setNoDelay(true);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
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
      const headOnly = new SseStream(res, tokenId, this.limits.bufferBytes);
      headOnly.end();
      return headOnly;
    }
    const stream = new SseStream(res, tokenId, this.limits.bufferBytes, this.observer);
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
