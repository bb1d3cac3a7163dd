/**
 * One subscriber's SSE stream of a process's events, from a seq on: exactly what follows it, then live.
 *
 * - Where the host's history still reaches, events come from it (`eventsAfter$`), their frames shared.
 * - Where it no longer does, the gap is filled from the executor's own window with `process/read`; only
 *   what neither reaches becomes one `truncated` event (naming the seq that follows).
 * - A replay (history, or fill) pauses at half the buffer bound and goes on after `drain`, so a late
 *   subscriber is never cut for catching up; a live burst that takes the buffer past the bound ends the
 *   stream (the client resumes by seq). A subscriber that drains nothing for `stallMs` is ended too.
 * - The stream ends after `closed` or `failed`, and stops (unsubscribing) when the client goes away.
 */
import type { Subscription } from 'rxjs';
import { takeWhile } from 'rxjs/operators';
import type { ExecProcess } from '../../exec/exec-process';
import type { ProcessEvent } from '../../exec/process-event';
import { ExecClientError } from '../../errors';
import type { ReadResponse } from '../../wire/process';
import { failedFrame, frameOf, truncatedFrame } from './event-frames';
import type { SseStream } from './sse';

/** How long a paused replay waits for the client to take what was sent. */
export const DEFAULT_STALL_MS = 30_000;

/**
 * Streams `process`'s events after `afterSeq` into `stream`; with `follow: false`, only what the host
 * holds now (its history, filled from the executor's window), then the stream ends. Returns at once;
 * teardown follows the stream's end.
 */
export function streamProcessEvents(process: ExecProcess, stream: SseStream, afterSeq: number, options: { readonly follow: boolean; readonly stallMs?: number }): void {
  new ProcessEventPump(process, stream, afterSeq, options.stallMs ?? DEFAULT_STALL_MS, options.follow).start();
}

class ProcessEventPump {
  private subscription: Subscription | undefined;
  private replaying = false;
  private stall: NodeJS.Timeout | undefined;
  private filled = false;

  constructor(
    private readonly process: ExecProcess,
    private readonly stream: SseStream,
    /** The last seq the client has: everything written is after it. */
    private cursor: number,
    private readonly stallMs: number,
    private readonly follow: boolean,
  ) {
    stream.onEnd(() => this.stop());
  }

  start(): void {
    if (this.stream.isEnded) return;
    if (!this.filled && this.cursor + 1 < this.process.historyStartSeq) {
      this.filled = true;
      this.process.read(this.cursor, null, 0).then(
        (read) => this.fill(read),
        (error: unknown) => this.fail(error),
      );
      return;
    }
    this.replaying = true;
    const paused = (): boolean => this.replaying && this.stream.buffered >= this.stream.highWater;
    this.subscription = this.process
      .eventsAfter$(this.cursor)
      .pipe(takeWhile(() => !paused(), true))
      .subscribe({ next: (event) => this.onEvent(event), complete: () => this.onComplete() });
    this.replaying = false;
    // Caught up with what the host holds: without `follow`, that is the end (unless a replay paused).
    if (!this.follow && this.subscription !== undefined && !this.subscription.closed) {
      this.stop();
      this.stream.end();
    }
  }

  private onEvent(event: ProcessEvent): void {
    if (!this.stream.write(frameOf(event))) return this.stop();
    if (event.type === 'truncated') this.cursor = event.nextSeq - 1;
    else if (event.type !== 'failed') this.cursor = event.seq;
    if (event.type === 'closed' || event.type === 'failed') this.stream.end();
  }

  /** The source completed: the process ended (the stream ends too), or a replay paused at the high water. */
  private onComplete(): void {
    this.subscription = undefined;
    if (this.stream.isEnded) return;
    const state = this.process.state;
    const last = this.process.historyStartSeq - 1;
    if ((state === 'closed' || state === 'failed') && this.cursor >= last && this.stream.buffered < this.stream.highWater) {
      // A released history replays no `closed`: the process did close, at the last seq (the history's end).
      if (state === 'closed') this.stream.write(frameOf({ type: 'closed', seq: last }));
      this.stream.end();
      return;
    }
    this.afterDrain();
  }

  /** Goes on once the client took what was sent; ends the stream if it takes nothing for `stallMs`. */
  private afterDrain(): void {
    const res = this.stream.res;
    const resume = (): void => {
      clearTimeout(this.stall);
      this.stall = undefined;
      this.start();
    };
    res.once('drain', resume);
    this.stall = setTimeout(() => {
      res.off('drain', resume);
      this.stream.end();
    }, this.stallMs);
  }

  /** Writes the executor's chunks between the cursor and the host's history; what neither has, as `truncated`. */
  private fill(read: ReadResponse): void {
    if (this.stream.isEnded) return;
    const until = this.process.historyStartSeq;
    const chunks = read.chunks.filter((c) => c.seq > this.cursor && c.seq < until);
    let next = this.cursor + 1;
    for (const chunk of chunks) {
      if (chunk.seq !== next) break;
      this.stream.write(frameOf({ type: 'output', seq: chunk.seq, stream: chunk.stream, chunk: chunk.chunk }));
      this.cursor = chunk.seq;
      next += 1;
    }
    // An exit inside the gap is the one seq no chunk carries (docs/protocol.md#reading-with-a-cursor).
    if (next < until && read.exited && read.exitCode !== null && chunks.every((c) => c.seq !== next)) {
      this.stream.write(frameOf({ type: 'exited', seq: next, exitCode: read.exitCode, sandboxDenied: read.sandboxDenied }));
      this.cursor = next;
      next += 1;
      for (const chunk of chunks.filter((c) => c.seq >= next)) {
        if (chunk.seq !== next) break;
        this.stream.write(frameOf({ type: 'output', seq: chunk.seq, stream: chunk.stream, chunk: chunk.chunk }));
        this.cursor = chunk.seq;
        next += 1;
      }
    }
    if (next < until) {
      this.stream.write(truncatedFrame(until, until - next));
      this.cursor = until - 1;
    }
    if (this.stream.buffered >= this.stream.highWater) this.afterDrain();
    else this.start();
  }

  private fail(error: unknown): void {
    const failure = error instanceof ExecClientError ? error : undefined;
    this.stream.write(failedFrame(failure?.code ?? 'HOST_ERROR', failure?.message ?? 'reading the process from the executor failed'));
    this.stream.end();
  }

  private stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    clearTimeout(this.stall);
    this.stall = undefined;
  }
}
