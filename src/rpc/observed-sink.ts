/**
 * A call's sink as the connection's `onCall` observer hears it: how the call settled and how long it took.
 */
import type { SchedulerLike } from 'rxjs';
import { ExecClientError } from '../errors';
import type { CallSink } from './pending-calls';
import type { CallObserver } from './rpc-options';

/**
 * `sink`, telling `onCall` how the call of `method` settled (`ok`, the error's code, `ABORTED` when its
 * `signal` cancelled it) and how long it took on `scheduler`'s clock.
 */
export function observedSink<T>(sink: CallSink<T>, method: string, scheduler: SchedulerLike, onCall: CallObserver, signal: AbortSignal | undefined): CallSink<T> {
  const startedAt = scheduler.now();
  return {
    next: (result) => {
      onCall(method, 'ok', scheduler.now() - startedAt);
      sink.next(result);
    },
    error: (error) => {
      onCall(method, error instanceof ExecClientError ? error.code : signal?.aborted === true ? 'ABORTED' : 'UNKNOWN', scheduler.now() - startedAt);
      sink.error(error);
    },
  };
}
