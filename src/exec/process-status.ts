import type { Subscriber } from 'rxjs';
import { Observable } from 'rxjs';
import type { ExecClientError } from '../errors';

/** What `ExecProcess.state` reports: `running`, `exited` (output may still follow), `closed`, or `failed`. */
export type ProcessState = 'running' | 'exited' | 'closed' | 'failed';

/**
 * The lifecycle of one process: its state, exit code and failure, and `state$` for whoever watches.
 * Observers are kept only while someone subscribes (a finished process holds none), so a thousand
 * kept processes cost a few fields each.
 */
export class ProcessStatus {
  private value: ProcessState = 'running';
  private exit: number | undefined;
  private error: ExecClientError | undefined;
  private observers: Subscriber<ProcessState>[] = [];

  /**
   * The current state, then each change: `running`, `exited`, then `closed`; or `failed` from any of
   * them. Replays the current state to each subscriber and completes after `closed` or `failed` (at
   * once for a subscriber arriving later). Never errors. Unsubscribing only removes that subscriber.
   */
  readonly state$: Observable<ProcessState>;

  /** `onChange` runs after each change (the environment's process list listens there). */
  constructor(private readonly onChange: () => void) {
    this.state$ = new Observable<ProcessState>((subscriber) => {
      subscriber.next(this.value);
      if (this.ended) {
        subscriber.complete();
        return undefined;
      }
      this.observers = [...this.observers, subscriber];
      return () => {
        this.observers = this.observers.filter((o) => o !== subscriber);
      };
    });
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
    if (this.ended) this.observers = [];
    for (const observer of observers) {
      observer.next(next);
      if (this.ended) observer.complete();
    }
    this.onChange();
  }
}
