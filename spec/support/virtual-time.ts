/**
 * Virtual time for code that mixes a scheduler's timers with promises (the client's fetch loop, a close
 * that awaits, a child's shutdown): rxjs's VirtualTimeScheduler, moved forward one due instant at a
 * time, the promise work each instant starts let run before the next one. A timer taken from anywhere
 * but the scheduler (setTimeout, setInterval) never fires here, so a spec on this clock fails if the code
 * under test used a real one.
 */
import type { SchedulerAction, Subscription } from 'rxjs';
import { VirtualTimeScheduler } from 'rxjs';

/** How far {@link VirtualClock.run} moves the clock before it gives up on the work settling. */
const RUN_LIMIT_MS = 24 * 3_600_000;

/** Lets every promise continuation (and what they chain) run: a few turns of the event loop. */
export async function settle(): Promise<void> {
  for (let turn = 0; turn < 4; turn += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A VirtualTimeScheduler that starts at `start` (ms), records every delay it is asked for, and moves with the work. */
export class VirtualClock extends VirtualTimeScheduler {
  /** Every delay `schedule` was called with, in order (an rxjs `interval`'s later periods are not calls). */
  readonly delays: number[] = [];

  constructor(start = 0) {
    super();
    this.frame = start;
  }

  override schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    this.delays.push(delay);
    return super.schedule(work, delay, state);
  }

  /** Moves the clock `ms` forward: each action due by then runs at its instant, promise work settling after each. */
  async advance(ms: number): Promise<void> {
    const until = this.frame + ms;
    await settle();
    for (let next = this.actions[0]; next !== undefined && next.delay <= until; next = this.actions[0]) {
      this.runAt(next.delay);
      await settle();
    }
    this.frame = until;
  }

  /**
   * Moves the clock from one due action to the next until `work` settles, and returns what it settled
   * with. Throws when nothing is scheduled and the work still waits (it waits on something else than
   * time), or past a day of virtual time.
   */
  async run<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    work.then(
      () => (settled = true),
      () => (settled = true),
    );
    const limit = this.frame + RUN_LIMIT_MS;
    for (;;) {
      await settle();
      if (settled) return work;
      const next = this.actions[0];
      if (next === undefined) throw new Error(`virtual clock at ${this.frame}: nothing scheduled, and the work still waits`);
      if (next.delay > limit) throw new Error(`virtual clock at ${this.frame}: the work did not settle within a day`);
      this.runAt(next.delay);
    }
  }

  /** Runs the actions due at `instant` (and those they schedule for it). */
  private runAt(instant: number): void {
    const before = this.maxFrames;
    this.maxFrames = instant;
    try {
      this.flush();
    } finally {
      this.maxFrames = before;
    }
  }
}
