/**
 * When an output log's segments reach the disk: fdatasync at most once per interval (1 s by default)
 * on the injected scheduler's clock and timer, and at once when asked (a process's exit or close, a
 * flush, closing the log). Also closes the write handles of segments that take no more writes, once
 * their last bytes are synced.
 */
import { performance } from 'node:perf_hooks';
import type { SchedulerLike, Subscription } from 'rxjs';
import type { LogState } from './log-state';
import type { Segment } from './segment';

/** Schedules and runs the syncs of one log. Its timer runs only while written bytes await a sync. */
export class LogSync {
  private timer: Subscription | undefined;
  private lastSyncAt = -Infinity;
  private running: Promise<void> = Promise.resolve();
  private readonly dirty = new Set<Segment>();

  constructor(
    private readonly state: LogState,
    private readonly scheduler: SchedulerLike,
    private readonly intervalMs: number,
    /** Called with the error when a sync fails (the log fails); never rejects a caller. */ private readonly failed: (error: unknown) => void,
    /** Hears each fdatasync's wall-clock ms (the host's metrics). */ private readonly synced: (ms: number) => void = () => undefined,
  ) {}

  /** A write to `segment` completed: it is synced within the interval (at once when the last sync is old enough). */
  written(segment: Segment): void {
    this.dirty.add(segment);
    this.schedule();
  }

  /** Forgets `segment` (it was dropped): nothing of it is synced any more. */
  forget(segment: Segment): void {
    this.dirty.delete(segment);
  }

  /** Syncs what was written now, without waiting for the interval. Resolves when done; never rejects. */
  syncNow(): Promise<void> {
    this.timer?.unsubscribe();
    this.timer = undefined;
    this.running = this.running.then(() => this.syncDirty());
    return this.running;
  }

  /** Stops the timer (the log failed or is closing). */
  cancel(): void {
    this.timer?.unsubscribe();
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.dirty.size === 0 || this.state.failure !== undefined) return;
    const delay = Math.max(0, this.lastSyncAt + this.intervalMs - this.scheduler.now());
    this.timer = this.scheduler.schedule(() => {
      this.timer = undefined;
      void this.syncNow();
    }, delay);
  }

  private async syncDirty(): Promise<void> {
    if (this.state.failure !== undefined) return;
    const segments = [...this.dirty];
    this.dirty.clear();
    if (segments.length > 0) {
      this.lastSyncAt = this.scheduler.now();
      try {
        for (const segment of segments) {
          const startedAt = performance.now();
          await segment.writer?.datasync();
          this.synced(performance.now() - startedAt);
        }
      } catch (error: unknown) {
        this.failed(error);
        return;
      }
    }
    await this.closeRetired();
    this.schedule();
  }

  /** Closes the handles of segments behind the active one that have nothing queued and nothing unsynced. */
  private async closeRetired(): Promise<void> {
    const active = this.state.active;
    for (const segment of this.state.segments) {
      const writer = segment.writer;
      if (segment === active || writer === undefined || this.dirty.has(segment) || segment.fileBytes !== segment.takenBytes) continue;
      segment.writer = undefined;
      await writer.close().catch(() => undefined);
    }
  }
}
