import type { SchedulerLike } from 'rxjs';
import { DecodeError, FrameTooLargeError, RequestTimeoutError } from '../errors';
import type { Inbound, JsonRpcErrorObject, RequestId } from '../wire/jsonrpc';
import { encodeRequest } from '../wire/jsonrpc';
import type { MethodName, ParamsOf, ResultOf } from '../wire/methods';
import { decodeResultOrError, encodeParams } from '../wire/methods';
import type { DeadlineClock, DeadlineEntry, DeadlineQueue } from './deadlines';
import { Deadlines } from './deadlines';
import { toRpcError } from './rpc-error';

/** An inbound reply: a response or an error response. */
export type Reply = Inbound & { readonly type: 'response' | 'error' };

/** Where one call's outcome goes: one decoded result, or one error. */
export interface CallSink<T> {
  readonly next: (result: T) => void;
  readonly error: (error: unknown) => void;
}

/** A registered call, as its starter holds it. */
export interface PendingCallHandle {
  /** Fails the call with `error` (if it is still pending) and releases it. */
  fail(error: unknown): void;
  /** Releases the call without settling it (unsubscribed). Idempotent. */
  drop(): void;
}

/**
 * One call waiting for its reply: a single object holds everything (it is its own deadline entry, and its
 * abort listener exists only when a signal was given). It settles at most once; settling, failing or
 * dropping it releases its map entry, its deadline, its abort listener and its sink.
 */
class PendingCall implements PendingCallHandle, DeadlineEntry {
  deadlineAt = 0;
  deadlineQueue: DeadlineQueue | undefined = undefined;
  private sink: CallSink<unknown> | undefined;
  private onAbort: (() => void) | undefined;

  constructor(
    private readonly calls: PendingCalls,
    readonly id: number,
    private readonly method: MethodName,
    private readonly timeoutMs: number,
    sink: CallSink<unknown>,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.sink = sink;
    if (signal !== undefined) {
      this.onAbort = () => this.fail(signal.reason);
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  /** Not settled, failed or dropped yet. */
  get pending(): boolean {
    return this.sink !== undefined;
  }

  drop(): void {
    if (this.sink === undefined) return;
    // Released here: a settled call may stay a while in its deadline queue, holding nothing.
    this.sink = undefined;
    this.calls.release(this);
    if (this.onAbort !== undefined) this.signal?.removeEventListener('abort', this.onAbort);
    this.onAbort = undefined;
  }

  fail(error: unknown): void {
    const sink = this.sink;
    if (sink === undefined) return;
    this.drop();
    sink.error(error);
  }

  /** The deadline passed. */
  expire(): void {
    this.fail(new RequestTimeoutError(this.method, this.timeoutMs));
  }

  /** A result arrived: decoded with the method's codec (a failure is this call's DecodeError alone). */
  result(value: unknown): void {
    const sink = this.sink;
    if (sink === undefined) return;
    this.drop();
    const decoded = decodeResultOrError(this.method, value);
    if (decoded instanceof DecodeError) sink.error(decoded);
    else sink.next(decoded);
  }

  /** An error reply arrived. */
  error(error: JsonRpcErrorObject): void {
    const sink = this.sink;
    if (sink === undefined) return;
    this.drop();
    sink.error(toRpcError(this.method, error));
  }
}

/**
 * The calls of one connection waiting for a reply, keyed by request id: a reply finds its call with one
 * Map lookup, never one filter per pending call. Each call holds a deadline (one timer per distinct
 * timeout value, see {@link Deadlines}) and its abort listener; settling, failing or dropping the call
 * releases all three. A call settles at most once.
 */
export class PendingCalls {
  private readonly calls = new Map<RequestId, PendingCall>();
  private readonly deadlines: Deadlines;
  private nextId = 1;

  constructor(
    scheduler: SchedulerLike,
    /** The largest frame a call may send. */ private readonly maxFrameBytes: number,
    /** What the deadlines are measured on (the connection's PauseClock). @default scheduler */ clock: DeadlineClock = scheduler,
  ) {
    this.deadlines = new Deadlines(scheduler, clock);
  }

  /** Number of calls waiting for a reply. */
  get size(): number {
    return this.calls.size;
  }

  /** Stops every deadline (the connection stopped reading its replies) until {@link resumeDeadlines}. */
  suspendDeadlines(): void {
    this.deadlines.suspend();
  }

  /** Sets the deadlines again for what is left of them on the clock. */
  resumeDeadlines(): void {
    this.deadlines.resume();
  }

  /**
   * Starts one call with a fresh id: encodes it (FrameTooLargeError, nothing sent, when it is over the
   * frame limit), registers it and its abort listener (the signal's `reason`) before sending (so a synchronous
   * answer cannot be missed), hands the frame to `send` (a `send` that throws fails the call with what
   * it threw), then arms its deadline (RequestTimeoutError) from that moment. A reply decodes into
   * `sink` (an error reply as RpcError / NotFoundError / SpawnError, a result failing its codec as
   * DecodeError).
   */
  start<M extends MethodName>(
    method: M,
    params: ParamsOf<M>,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    send: (frame: string) => void,
    sink: CallSink<ResultOf<M>>,
  ): PendingCallHandle {
    const id = this.nextId++;
    const frame = encodeRequest(id, method, encodeParams(method, params));
    const tooLarge = this.frameTooLarge(method, frame);
    const call = new PendingCall(this, id, method, timeoutMs, sink as CallSink<unknown>, signal);
    if (tooLarge !== undefined) {
      call.fail(tooLarge);
      return call;
    }
    this.calls.set(id, call);
    try {
      send(frame);
    } catch (error: unknown) {
      call.fail(error);
    }
    // Armed once the frame is out (a first timer made here overlaps the round trip); not for a call
    // already settled (a synchronous answer, or a send that threw).
    if (call.pending) this.deadlines.armFor(timeoutMs, call);
    return call;
  }

  /** Settles the call a result answers; `false` when no call waits for its id. */
  settleResult(id: RequestId, result: unknown): boolean {
    const call = this.calls.get(id);
    if (call === undefined) return false;
    call.result(result);
    return true;
  }

  /** Settles the call `reply` answers; `false` when no call waits for its id. */
  settle(reply: Reply): boolean {
    if (reply.type === 'response') return this.settleResult(reply.id, reply.result);
    const call = this.calls.get(reply.id);
    if (call === undefined) return false;
    call.error(reply.error);
    return true;
  }

  /** Fails every pending call with the same `error` and drops every deadline (the connection closed). */
  failAll(error: unknown): void {
    for (const call of [...this.calls.values()]) call.fail(error);
    this.calls.clear();
    this.deadlines.clear();
  }

  /** @internal A call settled or was dropped: forget it and its deadline. */
  release(call: PendingCall): void {
    if (this.calls.get(call.id) === call) this.calls.delete(call.id);
    this.deadlines.cancel(call);
  }

  private frameTooLarge(method: string, frame: string): FrameTooLargeError | undefined {
    // A UTF-16 length bounds the UTF-8 size from both sides; measure only when it could be over.
    if (frame.length * 3 <= this.maxFrameBytes) return undefined;
    const bytes = Buffer.byteLength(frame, 'utf8');
    return bytes > this.maxFrameBytes ? new FrameTooLargeError(method, bytes, this.maxFrameBytes) : undefined;
  }
}

/** A sink that resolves a promise with the mapped outcome (`RpcConnection.callThen`): one object instead of two closures. */
export class ThenSink<R, T> implements CallSink<R> {
  constructor(
    private readonly resolve: (value: T) => void,
    private readonly onResult: (result: R) => T,
    private readonly onError: (error: unknown) => T,
  ) {}

  next(result: R): void {
    this.resolve(this.onResult(result));
  }

  error(error: unknown): void {
    this.resolve(this.onError(error));
  }
}
