/**
 * One subscriber's event stream (SSE or binary: the sink's framing) of a process's events, from a seq on: exactly what follows it, then live.
 * It reads two sources (`./event-sources`), never a concrete history:
 *
 * - Where the process's output history still reaches, events come from it (`eventsAfter$`), their
 *   frames shared.
 * - Where it no longer does, the gap is filled from the executor's own window with `process/read` (see
 *   `./window-fill`), again each time the history moved on meanwhile; only what neither reaches becomes
 *   one `truncated` event (naming the seq that follows).
 * - A replay (history, or fill) pauses at half the buffer bound and goes on after `drain`, so a late
 *   subscriber is never cut for catching up; a live burst that takes the buffer past the bound ends the
 *   stream (the client resumes by seq). A subscriber that drains nothing for `stallMs` is ended too.
 * - The stream ends after `closed` or `failed`, and stops (unsubscribing) when the client goes away.
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { takeWhile } from 'rxjs/operators';
import type { ProcessEvent } from '../../exec/process-event';
import { ExecClientError } from '../../errors';
import type { ReadResponse } from '../../wire/process';
import type { EventSources } from './event-sources';
import type { EventSink } from './sse-stream';
import type { FillItem } from './window-fill';
import { planFill } from './window-fill';

/** How long a paused replay waits for the client to take what was sent. */
export const DEFAULT_STALL_MS = 30_000;

/**
 * Streams a process's events after `afterSeq` from `sources` into `stream`; with `follow: false`, only what the host
 * holds now (its history, filled from the executor's window), then the stream ends. Returns at once;
 * teardown follows the stream's end. The stall timer runs on `scheduler` (default asyncScheduler).
 */
export function streamProcessEvents(
  sources: EventSources,
  stream: EventSink,
  afterSeq: number,
  options: { readonly follow: boolean; readonly stallMs?: number; readonly scheduler?: SchedulerLike },
): void {
  new ProcessEventPump(sources, stream, afterSeq, options.stallMs ?? DEFAULT_STALL_MS, options.follow, options.scheduler ?? asyncScheduler).start();
}

class ProcessEventPump {
  private subscription: Subscription | undefined;
  private replaying = false;
  /** The last replay stopped at the high water (rather than at the process's end). */
  private pausedReplay = false;
  private stall: Subscription | undefined;
  /** What a fill still has to write (it pauses at the high water like a replay). */
  private fillQueue: FillItem[] = [];

  constructor(
    private readonly sources: EventSources,
    private readonly stream: EventSink,
    /** The last seq the client has: everything written is after it. */
    private cursor: number,
    private readonly stallMs: number,
    private readonly follow: boolean,
    private readonly scheduler: SchedulerLike,
  ) {
    stream.onEnd(() => this.stop());
  }

  start(): void {
    if (this.stream.isEnded) return;
    if (this.fillQueue.length > 0) return this.writeFill();
    if (this.cursor + 1 < this.sources.history.historyStartSeq) {
      this.sources.window.read(this.cursor).then(
        (read) => this.fill(read),
        (error: unknown) => this.fail(error),
      );
      return;
    }
    this.replaying = true;
    this.pausedReplay = false;
    const goOn = (): boolean => {
      if (!this.replaying || this.stream.buffered < this.stream.highWater) return true;
      this.pausedReplay = true;
      return false;
    };
    this.subscription = this.sources.history
      .eventsAfter$(this.cursor)
      .pipe(takeWhile(goOn, true))
      .subscribe({ next: (event) => this.onEvent(event), complete: () => this.onComplete() });
    this.replaying = false;
    // Caught up with what the host holds: without `follow`, that is the end (unless a replay paused).
    if (!this.follow && this.subscription !== undefined && !this.subscription.closed) {
      this.stop();
      this.stream.end();
    }
  }

  private onEvent(event: ProcessEvent): void {
    if (!this.stream.write(this.stream.framing.event(event))) return this.stop();
    if (event.type === 'truncated') this.cursor = event.nextSeq - 1;
    else if (event.type !== 'failed') this.cursor = event.seq;
    if (event.type === 'closed' || event.type === 'failed') this.stream.end();
  }

  /** The source completed: a replay paused at the high water (it goes on after `drain`), or the process ended. */
  private onComplete(): void {
    this.subscription = undefined;
    if (this.stream.isEnded) return;
    if (this.pausedReplay) return this.afterDrain();
    // The process ended without a last event after the cursor: the client resumed at or past its end
    // (a history that no longer holds the end goes through the fill, which gives the close). Nothing follows.
    this.stream.end();
  }

  /** Goes on once the client took what was sent; ends the stream if it takes nothing for `stallMs`. */
  private afterDrain(): void {
    const cancel = this.stream.onDrain(() => {
      this.stall?.unsubscribe();
      this.stall = undefined;
      this.start();
    });
    this.stall = this.scheduler.schedule(() => {
      cancel();
      this.stream.end('stalled');
    }, this.stallMs);
  }

  /** Plans the gap between the cursor and the host's history from the executor's window, and writes it. */
  private fill(read: ReadResponse): void {
    if (this.stream.isEnded) return;
    const until = this.sources.history.historyStartSeq;
    // A closed process whose history holds nothing: its close is the gap's last seq.
    const closeSeq = this.sources.window.closeSeqBefore(until);
    this.fillQueue = planFill(read, { cursor: this.cursor, until, closeSeq });
    // Never stuck: a read that reaches nothing past the cursor leaves the gap to one marker.
    if (this.fillQueue.length === 0) this.fillQueue = [{ kind: 'truncated', nextSeq: until, droppedEvents: until - this.cursor - 1 }];
    this.writeFill();
  }

  /** Writes the planned fill up to the high water (then waits for `drain`), and goes on from the history after it. */
  private writeFill(): void {
    for (let item = this.fillQueue[0]; item !== undefined; item = this.fillQueue[0]) {
      if (this.stream.buffered >= this.stream.highWater) return this.afterDrain();
      this.fillQueue.shift();
      const { framing } = this.stream;
      const frame = item.kind === 'event' ? framing.event(item.event) : framing.truncated(item.nextSeq, item.droppedEvents);
      if (!this.stream.write(frame)) return this.stop();
      this.cursor = item.kind === 'event' ? item.event.seq : item.nextSeq - 1;
      if (item.kind === 'event' && item.event.type === 'closed') return this.stream.end();
    }
    this.start();
  }

  private fail(error: unknown): void {
    const failure = error instanceof ExecClientError ? error : undefined;
    this.stream.write(this.stream.framing.failed(failure?.code ?? 'HOST_ERROR', failure?.message ?? 'reading the process from the executor failed'));
    this.stream.end();
  }

  private stop(): void {
    this.fillQueue = [];
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.stall?.unsubscribe();
    this.stall = undefined;
  }
}
