/**
 * The sparse index files of a log's segments, written behind the data: the entries written data now backs
 * are appended to the index files of the segments written since, a rolled segment's at once, the active
 * one's at most once per sync interval (or now, when asked). The index is a hint (a reader checks an
 * entry on use, recovery rebuilds the last segment's), so it may lag the data; written with every buffer
 * it cost an open, a write and a close each time, which waited behind the segment's fdatasync for tens of
 * milliseconds and held the data writes back.
 */
import type { SchedulerLike } from 'rxjs';
import type { LogState } from './log-state';
import type { Segment } from './segment';

/** The index writes of one log, one after another, beside its data writes (never ahead of the data they index). */
export class IndexWriter {
  /** Segments written to since their index was last brought up to date. */
  private readonly unindexed = new Set<Segment>();
  private indexing: Promise<void> = Promise.resolve();
  /** When the active segment's index was last brought up to date (the scheduler's clock). */
  private indexedAt = -Infinity;

  constructor(
    private readonly state: LogState,
    private readonly scheduler: SchedulerLike,
    /** The least time between two updates of the active segment's index. */ private readonly intervalMs: number,
    /** Fails the log (an index write failed). */ private readonly fail: (error: unknown) => void,
  ) {}

  /** Data was written to `segment`: its index follows, soon (every index now when `all`). */
  written(segment: Segment, all: boolean): void {
    this.unindexed.add(segment);
    this.soon(all);
  }

  /** Brings every index up to date now. Resolves when done; never rejects (a failure fails the log). */
  async flush(): Promise<void> {
    this.soon(true);
    await this.indexing;
  }

  /** Resolves once the index writes queued so far are done (no index write runs on a segment a trim removes). */
  settled(): Promise<void> {
    return this.indexing;
  }

  private soon(all: boolean): void {
    this.indexing = this.indexing.then(() => this.writeIndexes(all)).catch((error: unknown) => this.fail(error));
  }

  private async writeIndexes(all: boolean): Promise<void> {
    if (this.state.failure !== undefined) return;
    const now = this.scheduler.now();
    const due = all || now - this.indexedAt >= this.intervalMs;
    for (const segment of [...this.unindexed]) {
      if (!due && segment === this.state.active) continue;
      this.unindexed.delete(segment);
      if (this.state.segments.includes(segment)) await this.writeIndex(segment); // not one the quota dropped
    }
    if (due) this.indexedAt = now;
  }

  /** Appends the index entries the file now backs to the segment's index file. */
  private async writeIndex(segment: Segment): Promise<void> {
    const index = segment.index;
    if (index === undefined) return;
    const backed = index.countBelow(segment.fileBytes);
    if (backed <= segment.indexWritten) return;
    const file = await this.state.fs.open(segment.indexPath, 'append');
    try {
      await file.write(index.encode(segment.indexWritten, backed));
    } finally {
      await file.close();
    }
    segment.indexWritten = backed;
  }
}
