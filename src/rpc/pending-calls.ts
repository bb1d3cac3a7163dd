import type { SchedulerLike } from 'rxjs';
import * as E from 'fp-ts/lib/Either';
import { AbortedError, RequestTimeoutError } from '../errors';
import type { Inbound, RequestId } from '../wire/jsonrpc';
import type { MethodName, ResultOf } from '../wire/methods';
import { decodeResult } from '../wire/methods';
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
  readonly fail: (error: unknown) => void;
  /** Releases the call without settling it (unsubscribed). Idempotent. */
  readonly drop: () => void;
}

interface PendingCall {
  readonly settle: (reply: Reply) => void;
  readonly fail: (error: unknown) => void;
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

  constructor(scheduler: SchedulerLike) {
    this.deadlines = new Deadlines(scheduler);
  }

  /** Number of calls waiting for a reply. */
  get size(): number {
    return this.calls.size;
  }

  /**
   * Registers call `id` before its frame is sent: a reply decodes into `sink` (an error reply as
   * RpcError / NotFoundError / SpawnError, a result failing its codec as DecodeError), `timeoutMs`
   * later it fails with RequestTimeoutError, and an abort of `signal` fails it with AbortedError.
   */
  add<M extends MethodName>(id: RequestId, method: M, timeoutMs: number, signal: AbortSignal | undefined, sink: CallSink<ResultOf<M>>): PendingCallHandle {
    const drop = (): void => {
      this.calls.delete(id);
      timer.cancel();
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (error: unknown): void => {
      drop();
      sink.error(error);
    };
    const onAbort = (): void => fail(new AbortedError(method));
    this.calls.set(id, {
      fail,
      settle: (reply) => {
        drop();
        if (reply.type === 'error') return sink.error(toRpcError(method, reply.error));
        const result = decodeResult(method, reply.result);
        return E.isLeft(result) ? sink.error(result.left) : sink.next(result.right);
      },
    });
    const timer = this.deadlines.arm(timeoutMs, () => fail(new RequestTimeoutError(method, timeoutMs)));
    signal?.addEventListener('abort', onAbort, { once: true });
    return { fail, drop };
  }

  /** Settles the call `reply` answers; `false` when no call waits for its id. */
  settle(reply: Reply): boolean {
    const call = this.calls.get(reply.id);
    if (call === undefined) return false;
    call.settle(reply);
    return true;
  }

  /** Fails every pending call with the same `error` and drops every deadline (the connection closed). */
  failAll(error: unknown): void {
    for (const call of [...this.calls.values()]) call.fail(error);
    this.calls.clear();
    this.deadlines.clear();
  }
}
