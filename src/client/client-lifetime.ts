/**
 * What a HostClient has open (calls waiting, streams), so that disposing it ends them all: each call and
 * each stream gets a signal that aborts when its caller's signal aborts (with that reason) or when the
 * client is disposed (with ClosedError), and is forgotten once it ends, so a long-lived client holds
 * nothing of the calls it made before.
 */
import { Observable } from 'rxjs';
import { ClosedError } from '../errors';

/** One call's or stream's signal and how to let it go. */
export interface Tracked {
  /** Aborts with the caller's reason, or with ClosedError when the client is disposed. */
  readonly signal: AbortSignal;
  /** The call or stream ended: forget it (idempotent). */
  release(): void;
}

/** The open calls and streams of one client. */
export class ClientLifetime {
  private readonly open = new Set<(reason: unknown) => void>();
  private disposedWith: ClosedError | undefined;

  /** Whether the client was disposed. */
  get disposed(): boolean {
    return this.disposedWith !== undefined;
  }

  /** How many calls and streams are open (bookkeeping). */
  get size(): number {
    return this.open.size;
  }

  /** A signal for one call or stream, linked to `callerSignal`; aborted at once once disposed. */
  track(callerSignal: AbortSignal | undefined): Tracked {
    const controller = new AbortController();
    const stop = (reason: unknown): void => {
      release();
      controller.abort(reason);
    };
    const onCaller = (): void => stop(callerSignal?.reason);
    const release = (): void => {
      this.open.delete(stop);
      callerSignal?.removeEventListener('abort', onCaller);
    };
    if (this.disposedWith !== undefined) controller.abort(this.disposedWith);
    else if (callerSignal?.aborted === true) controller.abort(callerSignal.reason);
    else {
      this.open.add(stop);
      callerSignal?.addEventListener('abort', onCaller, { once: true });
    }
    return { signal: controller.signal, release };
  }

  /** Runs `call` with a tracked signal, released when it settles. */
  async call<T>(callerSignal: AbortSignal | undefined, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const tracked = this.track(callerSignal);
    try {
      return await call(tracked.signal);
    } finally {
      tracked.release();
    }
  }

  /** `source$`, whose subscriptions the dispose errors with ClosedError. */
  observe<T>(source$: Observable<T>): Observable<T> {
    return new Observable<T>((subscriber) => {
      const tracked = this.track(undefined);
      if (tracked.signal.aborted) {
        subscriber.error(tracked.signal.reason);
        return undefined;
      }
      const onDispose = (): void => subscriber.error(tracked.signal.reason);
      tracked.signal.addEventListener('abort', onDispose, { once: true });
      const subscription = source$.subscribe(subscriber);
      return () => {
        tracked.signal.removeEventListener('abort', onDispose);
        tracked.release();
        subscription.unsubscribe();
      };
    });
  }

  /** Ends everything open with ClosedError; what is asked for later fails at once with it. */
  dispose(): void {
    this.disposedWith ??= new ClosedError('the HostClient was closed: its calls were aborted and its streams ended');
    const open = [...this.open];
    this.open.clear();
    for (const stop of open) stop(this.disposedWith);
  }
}
