import type { Observable, SchedulerLike } from 'rxjs';
import { asyncScheduler, BehaviorSubject } from 'rxjs';
import { distinctUntilChanged } from 'rxjs/operators';

/**
 * One consumer's claim that the connection stays paused (see {@link ConnectionFlow.hold}). Release it
 * once the consumer has caught up; releasing again does nothing.
 */
export interface FlowHold {
  /** Gives the claim up (idempotent); the connection reads again once no claim is left. */
  release(): void;
}

/** What a connection's flow control has done, for metrics. */
export interface FlowFacts {
  /** Whether the socket is paused now (held, and a socket is attached). */
  readonly paused: boolean;
  /** Holds not yet released. */
  readonly holds: number;
  /** How many times the socket went from reading to paused, across socket replacements. */
  readonly pauses: number;
  /** Total time the socket was paused, in scheduler milliseconds (the current stretch included). */
  readonly pausedMs: number;
}

/** @internal What a {@link ConnectionFlow} pauses: the reading side of one connection. */
export interface FlowTarget {
  /** Stops reading the socket (and the timers that wait for it). */
  pauseReading(): void;
  /** Reads the socket again. */
  resumeReading(): void;
}

/**
 * Flow control of a connection: consumers that fall behind hold it paused. Holds are counted: the
 * first one pauses the socket (it is no longer read, so the executor's writes back up and its processes
 * block on their pipes; nothing is lost), and releasing the last one resumes it. The holds outlive a
 * socket: the socket that replaces a lost one is paused as soon as it is attached, while holds remain.
 *
 * The cost of pausing: the executor sends the output of every process of a connection through one
 * bounded channel, so a held connection stalls **every** process on it, not only the one whose consumer
 * is behind; its call replies and pongs wait too (the connection's call deadlines and keepalive are
 * suspended meanwhile).
 */
export class ConnectionFlow {
  private holdCount = 0;
  private target: FlowTarget | undefined;
  private pausedAt: number | undefined;
  private pauseCount = 0;
  private pausedTotal = 0;
  private readonly pausedState = new BehaviorSubject<boolean>(false);

  /**
   * Whether the socket is paused: the current value, then each change. Completes never; unsubscribing
   * affects nothing else.
   */
  readonly paused$: Observable<boolean> = this.pausedState.pipe(distinctUntilChanged());

  /** `scheduler` times the paused stretches. */
  constructor(private readonly scheduler: SchedulerLike = asyncScheduler) {}

  /** Whether the socket is paused now. */
  get paused(): boolean {
    return this.pausedAt !== undefined;
  }

  /** Holds not yet released (any one keeps the connection paused). */
  get holds(): number {
    return this.holdCount;
  }

  /** A snapshot of what flow control has done (see {@link FlowFacts}). */
  get facts(): FlowFacts {
    const pausedAt = this.pausedAt;
    const current = pausedAt === undefined ? 0 : this.scheduler.now() - pausedAt;
    return { paused: pausedAt !== undefined, holds: this.holdCount, pauses: this.pauseCount, pausedMs: this.pausedTotal + current };
  }

  /**
   * Holds the connection paused until the returned hold is released. The first hold pauses the socket
   * at once; every process on the connection waits until the last hold is released.
   */
  hold(): FlowHold {
    this.holdCount += 1;
    if (this.holdCount === 1) this.apply();
    return new Hold(this);
  }

  /**
   * @internal Makes `target` the connection's reading side (replacing any earlier one, which is left as
   * it is: it is being retired): paused at once while held. The returned function detaches it.
   */
  attach(target: FlowTarget): () => void {
    this.stop();
    this.target = target;
    this.apply();
    return () => {
      if (this.target !== target) return;
      this.stop();
      this.target = undefined;
    };
  }

  /** @internal One hold was released. */
  released(): void {
    this.holdCount -= 1;
    if (this.holdCount === 0) this.apply();
  }

  private apply(): void {
    const target = this.target;
    if (target === undefined) return;
    if (this.holdCount > 0 && this.pausedAt === undefined) {
      this.pausedAt = this.scheduler.now();
      this.pauseCount += 1;
      target.pauseReading();
      this.pausedState.next(true);
    } else if (this.holdCount === 0 && this.pausedAt !== undefined) {
      // The stretch ends first: a hold taken by what resuming hands over pauses the socket again.
      this.stop();
      target.resumeReading();
    }
  }

  /** Ends the current paused stretch (the socket resumes, or goes). */
  private stop(): void {
    const pausedAt = this.pausedAt;
    if (pausedAt === undefined) return;
    this.pausedTotal += this.scheduler.now() - pausedAt;
    this.pausedAt = undefined;
    this.pausedState.next(false);
  }
}

/** A hold: released at most once. */
class Hold implements FlowHold {
  private flow: ConnectionFlow | undefined;

  constructor(flow: ConnectionFlow) {
    this.flow = flow;
  }

  release(): void {
    const flow = this.flow;
    if (flow === undefined) return;
    this.flow = undefined;
    flow.released();
  }
}
