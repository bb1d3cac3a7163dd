/**
 * An in-memory `fetch` for the HostClient's unit specs: no socket. Each call takes the next scripted
 * reply (a Response, an SSE body the spec drives, or a network error); a call with nothing scripted
 * hangs like a host that never answers. Like the real fetch, an aborted signal rejects the pending call
 * with an AbortError and errors the body of a response it already gave. Every call is recorded.
 */
import type { HostProcessEvent } from '../../src/client';
import { HOST_INSTANCE_HEADER } from '../../src/wire/operator-api';

/** One request the client made. */
export interface FakeCall {
  readonly url: URL;
  readonly method: string;
  /** Request headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body, if any. */
  readonly body: unknown;
  readonly signal: AbortSignal | undefined;
  /** When the call was made, on the fake's clock (`performance.now()` unless it was given another). */
  readonly at: number;
}

const abortError = (): DOMException => new DOMException('This operation was aborted', 'AbortError');

/**
 * A `text/event-stream` body the spec writes to, ends or breaks. It hands out what was pushed only as
 * the client reads (a pull source), so an end or a break comes after every byte pushed before it, as on
 * a socket.
 */
export class SseBody {
  readonly stream: ReadableStream<Uint8Array>;
  /** Whether the client cancelled it (or its request was aborted). */
  cancelled = false;
  /** How many times the client read it (`reader.read()`: its high-water mark is 0, so each read is one pull). */
  reads = 0;
  /** The answer's `Content-Type` (see {@link binary}). */
  contentType = 'text/event-stream';
  private readonly queue: (Uint8Array | { readonly end: true } | { readonly error: unknown })[] = [];
  private wake: (() => void) | undefined;
  private over = false;

  constructor(...frames: readonly string[]) {
    this.stream = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          this.reads += 1;
          while (this.queue.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
          const item = this.queue.shift();
          if (item instanceof Uint8Array) controller.enqueue(item);
          else if (item !== undefined && 'error' in item) controller.error(item.error);
          else controller.close();
        },
        cancel: () => {
          this.cancelled = true;
          this.over = true;
        },
      },
      { highWaterMark: 0 },
    );
    for (const frame of frames) this.push(frame);
  }

  /** Answers as the binary event stream (`application/vnd.exec-rx.events`) instead of SSE. */
  binary(): this {
    this.contentType = 'application/vnd.exec-rx.events';
    return this;
  }

  /** Sends text (frames, or any part of one). */
  push(text: string): this {
    return this.put(new TextEncoder().encode(text));
  }

  /** Sends bytes (any part of a frame, a UTF-8 sequence split where it falls). */
  pushBytes(bytes: Uint8Array): this {
    return this.put(bytes);
  }

  /** Ends the body as the host does after `closed` (a clean end). */
  end(): this {
    this.put({ end: true });
    this.over = true;
    return this;
  }

  /** Breaks the body as a dropped connection does (after what was pushed before). */
  fail(error: unknown = new TypeError('terminated')): this {
    this.put({ error });
    this.over = true;
    return this;
  }

  /** Called when the request's signal aborts: the body breaks at once, as the real fetch's does. */
  abort(): void {
    if (this.over) return;
    this.cancelled = true;
    this.queue.length = 0;
    this.fail(abortError());
  }

  private put(item: Uint8Array | { readonly end: true } | { readonly error: unknown }): this {
    if (this.over) return this;
    this.queue.push(item);
    this.wake?.();
    this.wake = undefined;
    return this;
  }
}

/** A scripted reply: a response, a stream, a network error, or a function of the call. */
export type Reply = Response | SseBody | Error | ((call: FakeCall) => Response | SseBody | Error);

/** The scriptable fetch; `clock` dates its calls (a virtual-time spec passes its scheduler). */
export class FakeFetch {
  readonly calls: FakeCall[] = [];
  private readonly replies: Reply[] = [];
  private readonly waiters: { readonly count: number; readonly resolve: () => void }[] = [];

  constructor(private readonly clock: { now(): number } = performance) {}

  /** Queues replies, one per call, in order. */
  reply(...replies: readonly Reply[]): this {
    this.replies.push(...replies);
    return this;
  }

  /** Resolves once `count` calls were made. */
  callsMade(count: number): Promise<void> {
    if (this.calls.length >= count) return Promise.resolve();
    return new Promise<void>((resolve) => this.waiters.push({ count, resolve }));
  }

  readonly fetch: typeof fetch = (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    const body: unknown = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    const signal = init?.signal ?? undefined;
    const call: FakeCall = { url, method: init?.method ?? 'GET', headers, body, signal, at: this.clock.now() };
    this.calls.push(call);
    for (const waiter of this.waiters.filter((w) => this.calls.length >= w.count)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    if (signal?.aborted === true) return Promise.reject(abortError());
    const next = this.replies.shift();
    if (next === undefined) {
      // A host that never answers: only the signal ends the wait.
      return new Promise<Response>((_, reject) => signal?.addEventListener('abort', () => reject(abortError()), { once: true }));
    }
    const reply = typeof next === 'function' ? next(call) : next;
    if (reply instanceof Error) return Promise.reject(reply);
    if (reply instanceof SseBody) {
      signal?.addEventListener('abort', () => reply.abort(), { once: true });
      return Promise.resolve(new Response(reply.stream, { status: 200, headers: { 'content-type': reply.contentType, [HOST_INSTANCE_HEADER]: HOST_A } }));
    }
    return Promise.resolve(reply);
  };
}

/** The instance id the fake host answers with (a restarted one answers {@link HOST_B}). */
export const HOST_A = 'a0a0a0a0-0000-4000-8000-00000000000a';
/** Another host instance (after a restart). */
export const HOST_B = 'b0b0b0b0-0000-4000-8000-00000000000b';

/** A network failure, as fetch reports a refused or reset connection. */
export const networkError = (): TypeError => new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });

/** A JSON answer. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', [HOST_INSTANCE_HEADER]: HOST_A, ...headers } });

/** A problem+json answer with the library's `code`, from host `instance`. */
export function problem(status: number, code: string, options: { readonly headers?: Record<string, string>; readonly instance?: string } = {}): Response {
  const instance = options.instance ?? HOST_A;
  const body = { type: 'about:blank', title: code.toLowerCase().replace(/_/g, ' '), status, code, detail: `detail of ${code}`, hostInstance: instance };
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/problem+json', [HOST_INSTANCE_HEADER]: instance, ...options.headers } });
}

/** An empty answer with `status` (a gateway's 502, a 204). */
export const empty = (status: number, headers: Record<string, string> = {}): Response => new Response(null, { status, headers });

/** Standard base64 of `text`'s UTF-8. */
const b64 = (text: string): string => btoa(String.fromCharCode(...new TextEncoder().encode(text)));

/** SSE frames of a process's event stream. */
export const frames = {
  output: (seq: number, text: string, stream: 'stdout' | 'stderr' | 'pty' = 'stdout'): string => `id: ${seq}\nevent: output\ndata: ${JSON.stringify({ seq, stream, chunk: b64(text) })}\n\n`,
  exited: (seq: number, exitCode: number): string => `id: ${seq}\nevent: exited\ndata: ${JSON.stringify({ seq, exitCode })}\n\n`,
  closed: (seq: number): string => `id: ${seq}\nevent: closed\ndata: ${JSON.stringify({ seq })}\n\n`,
  truncated: (nextSeq: number, droppedEvents: number): string => `event: truncated\ndata: ${JSON.stringify({ nextSeq, droppedEvents })}\n\n`,
  failed: (code: string, message: string): string => `event: failed\ndata: ${JSON.stringify({ code, message })}\n\n`,
  ping: (): string => ': ping\n\n',
  /** The come-back event a host that stops gracefully ends every stream with. */
  restart: (retryMs: number): string => `retry: ${retryMs}\nevent: restart\ndata: ${JSON.stringify({ retryMs })}\n\n`,
};

/**
 * A process event as a short line: `output:SEQ:STREAM:TEXT` (`output:SEQ:TEXT` without `withStream`),
 * `exited:SEQ:CODE`, `closed:SEQ`, `truncated:NEXT:DROPPED`.
 */
export function eventLine(event: HostProcessEvent, withStream = true): string {
  switch (event.type) {
    case 'output':
      return `output:${event.seq}:${withStream ? `${event.stream}:` : ''}${new TextDecoder().decode(event.chunk)}`;
    case 'exited':
      return `exited:${event.seq}:${event.exitCode}`;
    case 'closed':
      return `closed:${event.seq}`;
    case 'truncated':
      return `truncated:${event.nextSeq}:${event.droppedEvents}`;
  }
}
