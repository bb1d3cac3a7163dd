import type { Subscriber, TeardownLogic } from 'rxjs';
import { Observable } from 'rxjs';

/** What a {@link SourceObservable} subscribes to: `subscribeTo(subscriber, key)` does the work. */
export interface ObservableSource<T> {
  subscribeTo(subscriber: Subscriber<T>, key: number): TeardownLogic;
}

/**
 * An Observable whose subscribe function is `source.subscribeTo(subscriber, key)`: one small object,
 * without the closure (and its context) `new Observable((s) => ...)` makes. Per-process observables
 * (a history's `events$`, a status's `state$`) use it, so that a thousand kept processes cost less.
 */
export class SourceObservable<T> extends Observable<T> {
  constructor(
    /** What it subscribes to. */ readonly origin: ObservableSource<T>,
    /** Passed to `origin.subscribeTo` with each subscriber. */ readonly key: number,
  ) {
    super(subscribeToSource);
  }
}

/** Shared by every SourceObservable: rxjs calls it with the Observable as `this`. */
function subscribeToSource<T>(this: Observable<T>, subscriber: Subscriber<T>): TeardownLogic {
  const self = this as unknown as SourceObservable<T>;
  return self.origin.subscribeTo(subscriber, self.key);
}
