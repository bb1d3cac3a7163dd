import type { Observable, Subscriber, TeardownLogic } from 'rxjs';
import { filter, map, take } from 'rxjs/operators';
import type { ExecClientError } from '../errors';
import { ProcessFailedError } from '../errors';
import type { ProcessExit } from './process-summaries';
import { SourceObservable } from './source-observable';
import { noSubscribers, withoutSubscriber, withSubscriber } from './subscriber-list';

/** What `ExecProcess.state` reports: `running`, `exited` (output may still follow), `closed`, or `failed`. */
export type ProcessState = 'running' | 'exited' | 'closed' | 'failed';

/** Told after each change of a {@link ProcessStatus}, with the process's id (for a process: its environment's list). */
export interface StatusListener {
  changed(processId: string): void;
}

/**
 * The lifecycle of one process: its state, exit code and failure, and `state$` for whoever watches.
 * Observers are kept only while someone subscribes and `state$` is made on first use (a finished
 * process holds neither), so a thousand kept processes cost a few fields each.
 *
 * It is the `ObservableSource` of its `state$` by shape, not by an `implements` clause: `subscribeTo` is
 * internal (stripped from the declarations), and a declared class that lacks a member of an interface it
 * implements fails a user's type check (without `skipLibCheck`).
 */
export class ProcessStatus {
  private value: ProcessState = 'running';
  private exit: number | undefined;
  private error: ExecClientError | undefined;
  private observers: readonly Subscriber<ProcessState>[] = noSubscribers();
  private stateObservable: Observable<ProcessState> | undefined;

  /**
   * `listener.changed(processId)` runs after each change (the environment's process list listens there).
   * The listener and the id are kept as they are, not wrapped in a closure: a closure and its context
   * would cost every kept process about 170 bytes more (docs/performance.md, issue 40).
   */
  constructor(
    private readonly processId: string,
    private readonly listener: StatusListener | undefined,
  ) {}

  /**
   * The current state, then each change: `running`, `exited`, then `closed`; or `failed` from any of
   * them. Replays the current state to each subscriber and completes after `closed` or `failed` (at
   * once for a subscriber arriving later). Never errors. Unsubscribing only removes that subscriber.
   */
  get state$(): Observable<ProcessState> {
    this.stateObservable ??= new SourceObservable<ProcessState>(this, 0);
    return this.stateObservable;
  }

  /** @internal The subscribe function of {@link state$}. */
  subscribeTo(subscriber: Subscriber<ProcessState>): TeardownLogic {
    subscriber.next(this.value);
    if (this.ended) {
      subscriber.complete();
      return undefined;
    }
    this.observers = withSubscriber(this.observers, subscriber);
    return () => {
      this.observers = withoutSubscriber(this.observers, subscriber);
    };
  }

  get state(): ProcessState {
    return this.value;
  }

  /** The exit code once the process exited (kept after its `exited` event left the history). */
  get exitCode(): number | undefined {
    return this.exit;
  }

  /** Why the process failed, once `failed`. */
  get failure(): ExecClientError | undefined {
    return this.error;
  }

  /**
   * The exit, once the state leaves `running` (at once when it has): `{ exitCode }`, else the failure;
   * a process that closed without an exit code (not expected from an executor) fails with a
   * ProcessFailedError naming `processId`. Emits once and completes.
   */
  exit$(processId: string): Observable<ProcessExit> {
    return this.state$.pipe(
      filter((state) => state !== 'running'),
      take(1),
      map(() => {
        const exitCode = this.exit;
        if (exitCode !== undefined) return { exitCode };
        throw this.error ?? new ProcessFailedError(processId, `process ${processId} closed without reporting an exit code`);
      }),
    );
  }

  /** `closed` or `failed`: nothing more happens to the process. */
  get ended(): boolean {
    return this.value === 'closed' || this.value === 'failed';
  }

  /** The `exited` event was published. */
  exited(exitCode: number): void {
    this.exit = exitCode;
    if (this.value === 'running') this.become('exited');
  }

  /** The `closed` event was published. */
  closed(): void {
    if (!this.ended) this.become('closed');
  }

  /** The process failed on our side. */
  failed(error: ExecClientError): void {
    if (this.ended) return;
    this.error = error;
    this.become('failed');
  }

  private become(next: ProcessState): void {
    this.value = next;
    const observers = this.observers;
    if (this.ended) this.observers = noSubscribers();
    for (const observer of observers) {
      observer.next(next);
      if (this.ended) observer.complete();
    }
    this.listener?.changed(this.processId);
  }
}
