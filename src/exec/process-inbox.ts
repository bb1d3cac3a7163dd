import type { SchedulerLike } from 'rxjs';
import { Subscription, timer } from 'rxjs';
import type { ExecClientError } from '../errors';
import { ExecClientError as BaseError, isProcessStarting, ProcessFailedError, ProtocolError } from '../errors';
import { STARTING_READ_RETRIES } from '../session/recover-processes';
import type { ProcessWireEvent } from '../rpc/notification-router';
import type { RpcConnection } from '../rpc/rpc-connection';
import type { ExecSession } from '../session/exec-session';
import type { ProcessSink } from '../session/process-sink';
import type { ReadResponse } from '../wire/process';
import type { SequencedEvent } from '../wire/process-event';
import type { OutputHistory } from './output-history';
import { mergeRecoveryRead } from './merge-recovery-read';
import type { ProcessStatus } from './process-status';
import { ReorderBuffer } from './reorder-buffer';

/** How long a hole in the seq run may stay open before a `process/read` fills it. */
export const DEFAULT_HOLE_FILL_DELAY_MS = 250;

/**
 * The wire side of one process (the session's {@link ProcessSink}): notifications routed from each
 * connection and recovery reads go through the reorder buffer, in seq order, into the history and the
 * status. A hole (a malformed or lost notification) is filled by a `process/read` after a short delay;
 * a gap the executor can no longer fill fails the process and terminates it.
 *
 * Teardown: once the process is closed or failed, its routes, its hole timer, its reorder buffer and its
 * registration with the session are dropped (a finished process keeps a few numbers here).
 */
export class ProcessInbox implements ProcessSink {
  /** Until the process ends. */
  private buffer: ReorderBuffer | undefined;
  /** The routes of the connections it is bound to (made on first bind, dropped at the end). */
  private routes: Set<Subscription> | undefined;
  private holeTimer: Subscription | undefined;
  private fillingHole = false;
  /** Hole-filling reads the executor answered `is starting` so far (each asked again after the delay, up to STARTING_READ_RETRIES). */
  private startingFills = 0;
  private highestSeen = 0;
  private finalSeq = 0;
  /** Adopted and not yet recovered: a first read that no longer reaches the next seq marks the rest truncated. */
  private adoptedGap: boolean;
  /** A recovery read is out (see `beginRecovery`): what the buffer cannot hold meanwhile is dropped, the read brings it. */
  private recovering = false;

  constructor(
    readonly processId: string,
    /** Its session (the process's requests go through it too). */
    readonly session: ExecSession,
    private readonly history: OutputHistory,
    private readonly status: ProcessStatus,
    /** Its scheduler (the process's requests wait on it too). */
    readonly scheduler: SchedulerLike,
    private readonly holeFillDelayMs: number,
    /** An adopted process: the last seq its history holds already (its first recovery reads after it). */
    adoptedAfterSeq?: number,
  ) {
    this.buffer = new ReorderBuffer(processId, undefined, adoptedAfterSeq ?? 0);
    this.highestSeen = adoptedAfterSeq ?? 0;
    this.finalSeq = adoptedAfterSeq ?? 0;
    this.adoptedGap = adoptedAfterSeq !== undefined;
  }

  /** The last seq published to consumers (0 when none). Recovery reads start after it. */
  get lastPublishedSeq(): number {
    return this.buffer === undefined ? this.finalSeq : this.buffer.lastPublishedSeq;
  }

  /** The highest seq seen from the executor, published or not (a synthesized read's `nextSeq` follows it). */
  get highestSeenSeq(): number {
    return this.highestSeen;
  }

  /** Routes this process's notifications from `rpc`, until the process ends. */
  bind(rpc: RpcConnection): Subscription {
    const route = new Subscription();
    route.add(rpc.routeProcess(this.processId, { next: (event) => this.onWire(event), complete: () => route.unsubscribe() }));
    if (this.status.ended) route.unsubscribe();
    else (this.routes ??= new Set()).add(route);
    route.add(() => this.routes?.delete(route));
    return route;
  }

  /** A recovery read is about to go out (see `ProcessSink.beginRecovery`). */
  beginRecovery(): void {
    this.recovering = true;
  }

  /** Merges a recovery read through the reorder buffer. Throws typed errors (the session then fails the process). */
  recover(read: ReadResponse): void {
    this.recovering = false;
    if (this.status.ended || this.buffer === undefined) return;
    this.noteSeq(read.nextSeq - 1);
    if (this.adoptedGap) this.truncateAdoptedGap(this.buffer, read);
    this.publish(mergeRecoveryRead(this.buffer, read));
  }

  /**
   * Drops the process without a word to its history (an adopted process the executor no longer has):
   * its routes, hole timer, buffer and the session's registration go. Idempotent.
   */
  abandon(): void {
    if (this.buffer === undefined) return;
    this.ended();
  }

  /** Fails the process (terminal): a `failed` event ends its history. */
  fail(error: ExecClientError): void {
    if (this.status.ended) return;
    const failure =
      error instanceof ProcessFailedError || error.code === 'PROCESS_GAP'
        ? error
        : new ProcessFailedError(this.processId, `process ${this.processId} failed: ${error.message}`, { cause: error });
    this.status.failed(failure);
    this.history.append({ type: 'failed', error: failure });
    this.ended();
  }

  /**
   * The first read of an adopted process: when the executor's retained window starts above the next
   * seq its history expects (it evicted them while nobody was attached), the history gets ONE
   * `truncated` marker (`droppedBytes` 0: the executor does not say how many bytes went), and the
   * buffer goes on from the first retained chunk. The merge that follows sees no gap.
   */
  private truncateAdoptedGap(buffer: ReorderBuffer, read: ReadResponse): void {
    this.adoptedGap = false;
    const next = buffer.lastPublishedSeq + 1;
    let lowest = Number.POSITIVE_INFINITY;
    for (const chunk of read.chunks) if (chunk.seq >= next && chunk.seq < lowest) lowest = chunk.seq;
    if (lowest === Number.POSITIVE_INFINITY || lowest === next || buffer.pendingAt(next) !== undefined) return;
    this.history.append({ type: 'truncated', nextSeq: lowest, droppedEvents: lowest - next, droppedBytes: 0 });
    buffer.skipTo(lowest - 1);
  }

  private onWire(event: ProcessWireEvent): void {
    const buffer = this.buffer;
    if (buffer === undefined || this.status.ended) return;
    if (event.type === 'malformed') return this.fillHole();
    this.noteSeq(event.seq);
    // The next output in order, nothing waiting: no array, no state change, no hole (docs/performance.md).
    if (event.type === 'output' && buffer.acceptNext(event)) return this.history.append(event);
    // A recovery read is out and brings this event too (it was sent before the read's answer): a
    // process with fast output does not overflow the buffer while the read is on its way.
    if (this.recovering && !buffer.fits(event)) return;
    try {
      this.publish(buffer.push(event));
    } catch (error: unknown) {
      this.failAndTerminate(error);
    }
  }

  private publish(events: readonly SequencedEvent[]): void {
    for (const event of events) {
      if (event.type === 'exited') this.status.exited(event.exitCode);
      else if (event.type === 'closed') this.status.closed();
      this.history.append(event);
    }
    if (this.status.state === 'closed') return this.ended();
    if (this.buffer?.missingRange() !== undefined) this.scheduleHoleFill();
  }

  /** Closed or failed: drop the routes, the hole timer and the session's registration. */
  private ended(): void {
    this.holeTimer?.unsubscribe();
    this.holeTimer = undefined;
    const routes = this.routes;
    this.routes = undefined;
    if (routes !== undefined) for (const route of [...routes]) route.unsubscribe();
    if (this.buffer !== undefined) this.finalSeq = this.buffer.lastPublishedSeq;
    this.buffer = undefined;
    this.session.removeProcess(this.processId);
  }

  private scheduleHoleFill(): void {
    if (this.holeTimer !== undefined && !this.holeTimer.closed) return;
    this.holeTimer = timer(this.holeFillDelayMs, this.scheduler).subscribe(() => {
      if (this.buffer?.missingRange() !== undefined) this.fillHole();
    });
  }

  /** A hole (malformed or lost notification) is filled by a `process/read` from the last published seq. */
  private fillHole(): void {
    if (this.fillingHole || this.status.ended) return;
    this.fillingHole = true;
    this.session.call('process/read', { processId: this.processId, afterSeq: this.lastPublishedSeq, maxBytes: null, waitMs: 0 }).subscribe({
      next: (read) => {
        this.fillingHole = false;
        try {
          this.recover(read);
        } catch (error: unknown) {
          this.failAndTerminate(error);
        }
      },
      error: (error: unknown) => {
        this.fillingHole = false;
        if (this.status.ended) return;
        // Still being spawned (its start came on a socket that was lost): ask again after the delay.
        if (isProcessStarting(error) && this.startingFills < STARTING_READ_RETRIES) {
          this.startingFills += 1;
          // The timer that asked may still be running (an answer that came at once): a new one.
          this.holeTimer?.unsubscribe();
          this.holeTimer = undefined;
          this.scheduleHoleFill();
          return;
        }
        this.fail(asClientError(error));
      },
    });
  }

  private failAndTerminate(error: unknown): void {
    this.fail(asClientError(error));
    this.session.call('process/terminate', { processId: this.processId }).subscribe({ error: () => undefined });
  }

  private noteSeq(seq: number): void {
    if (seq > this.highestSeen) this.highestSeen = seq;
  }
}

const asClientError = (error: unknown): ExecClientError => (error instanceof BaseError ? error : new ProtocolError(String(error)));
