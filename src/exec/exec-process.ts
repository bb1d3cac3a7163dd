import type { Observable, SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, defer, firstValueFrom, lastValueFrom, of, race, timer } from 'rxjs';
import { filter, map, take, toArray } from 'rxjs/operators';
import type { ExecClientError } from '../errors';
import { ExecClientError as BaseError, ProcessFailedError, ProtocolError } from '../errors';
import type { RpcConnection } from '../rpc/rpc-connection';
import type { ProcessWireEvent } from '../rpc/notification-router';
import type { ExecSession } from '../session/exec-session';
import { isTerminal } from '../session/exec-session';
import type { ProcessSink } from '../session/process-sink';
import { toBytes } from '../wire/bytes';
import { SAFE_CHUNK_BYTES } from '../wire/limits';
import type { ReadResponse, WriteResponse } from '../wire/process';
import { EventHistory } from './event-history';
import type { CollectedOutput, RetainedHistory } from './process-summaries';
import type { HistoryBudget } from './history-budget';
import { mergeRecoveryRead } from './merge-recovery-read';
import type { ProcessEvent } from './process-event';
import type { OutputStream, SequencedEvent } from '../wire/process-event';
import { ReorderBuffer } from './reorder-buffer';
import { bytesOf, exitCodeOf, linesOf, textOf } from './output-views';
import { toBoundedAsyncIterable } from './bounded-iterator';

/** How long a hole in the seq run may stay open before a `process/read` fills it. */
export const DEFAULT_HOLE_FILL_DELAY_MS = 250;

/** Limits of one process's history and reorder buffer. */
export interface ProcessStreamOptions {
  /** Events kept for late subscribers. @default 256 */
  readonly historyEvents?: number;
  /** Output bytes kept for late subscribers. @default 1048576 */
  readonly historyBytes?: number;
  /** @internal Shared byte budget across all processes of a manager (the manager passes its own). */
  readonly budget?: HistoryBudget | undefined;
  /** Delay before a hole (lost notification) is filled by a read. @default 250 */
  readonly holeFillDelayMs?: number;
  /** Drives the hole-fill timer and `read`'s local wait; tests pass a TestScheduler. @default asyncScheduler */
  readonly scheduler?: SchedulerLike | undefined;
}

/** What `ExecProcess.state` reports. */
export type ProcessState = 'running' | 'exited' | 'closed' | 'failed';

/**
 * A process started on an executor. Its events flow in strictly increasing, contiguous seq order, each
 * exactly once, across socket replacements; late subscribers get a bounded replay first. Unsubscribing
 * from any view never stops the process: `terminate()` does.
 */
export class ExecProcess implements ProcessSink {
  private readonly buffer: ReorderBuffer;
  private readonly history: EventHistory;
  private readonly scheduler: SchedulerLike;
  private readonly holeFillDelayMs: number;
  private writeCounter = 0;
  private stateValue: ProcessState = 'running';
  private holeTimer: Subscription | undefined;
  private fillingHole = false;
  private highestSeenSeq = 0;
  private exitCodeValue: number | undefined;
  private readonly routes = new Set<Subscription>();

  /**
   * Every event of the process: a replay of the retained history (after a `truncated` marker when some
   * was dropped), then live events. Completes after `closed` or after a `failed` event; never errors.
   * Each subscriber gets its own replay; unsubscribing does not affect the process.
   */
  readonly events$: Observable<ProcessEvent>;

  /** @internal Built by ExecBackend.start. */
  constructor(
    /** Our key for the process on the executor (`StartParams.processId`, or a generated UUID). */
    readonly processId: string,
    private readonly client: ExecSession,
    options: ProcessStreamOptions = {},
  ) {
    this.buffer = new ReorderBuffer(processId);
    this.history = new EventHistory({ maxEvents: options.historyEvents ?? 256, maxBytes: options.historyBytes ?? 1_048_576 }, options.budget);
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.holeFillDelayMs = options.holeFillDelayMs ?? DEFAULT_HOLE_FILL_DELAY_MS;
    this.events$ = this.history.events$;
  }

  /** running, exited (output may still follow), closed, or failed. */
  get state(): ProcessState {
    return this.stateValue;
  }

  /** The last seq published to consumers (0 when none). */
  get lastPublishedSeq(): number {
    return this.buffer.lastPublishedSeq;
  }

  /** Retained history and subscribers (bookkeeping). */
  get retained(): RetainedHistory {
    return { events: this.history.retainedEvents, bytes: this.history.retainedBytes, subscribers: this.history.subscriberCount };
  }

  /** Output bytes of one or more streams; completes at close; errors if the process fails or history was truncated. */
  bytes$(stream?: OutputStream | OutputStream[]): Observable<Uint8Array> {
    return this.events$.pipe(bytesOf(stream));
  }
  /** UTF-8 text, decoded correctly across chunk boundaries. */
  text$(stream?: OutputStream | OutputStream[]): Observable<string> {
    return this.events$.pipe(textOf(stream));
  }
  /** Lines of text (without their line ending); a last unterminated line is emitted at close. */
  lines$(stream?: OutputStream | OutputStream[]): Observable<string> {
    return this.events$.pipe(linesOf(stream));
  }
  /**
   * The exit code, once, then completes; errors if the process fails before exiting. Kept on the process,
   * so a late subscriber gets it even when the `exited` event has left the bounded history.
   */
  get exitCode$(): Observable<number> {
    return defer(() => (this.exitCodeValue === undefined ? this.events$.pipe(exitCodeOf()) : of(this.exitCodeValue)));
  }

  /** The exit code once the process exited. */
  get exitCode(): number | undefined {
    return this.exitCodeValue;
  }
  /**
   * All output as text, one string per stream, once closed (for small outputs and tests). Rejects like
   * the views: when the process fails, or history was truncated before the call.
   */
  collect(): Promise<CollectedOutput> {
    const text = (stream: OutputStream): Promise<string> => lastValueFrom(this.text$(stream).pipe(toArray(), map((parts) => parts.join(''))));
    return Promise.all([text('stdout'), text('stderr'), text('pty'), firstValueFrom(this.exitCode$)]).then(([stdout, stderr, pty, exitCode]) => ({ stdout, stderr, pty, exitCode }));
  }

  /** For `for await`: a bounded buffer; a consumer that falls behind gets ConsumerOverflowError naming what it missed. */
  iterate(capacity = 1024): AsyncIterableIterator<ProcessEvent> {
    return toBoundedAsyncIterable(this.events$, capacity);
  }

  /** `for await (const event of process)`: {@link iterate} with its default capacity (1024 events). */
  [Symbol.asyncIterator](): AsyncIterableIterator<ProcessEvent> {
    return this.iterate();
  }

  /**
   * Reads retained output after `afterSeq` from the executor. With `waitMs > 0` it waits on the local
   * event stream first (at most `waitMs`), then asks with `waitMs: 0`: the executor runs one request at
   * a time per connection, so a server-side long poll would hold up every other call. Waits during
   * recovery and is sent again after it; once the environment failed it resolves with a synthesized
   * response whose `failure` names the error, as codex does.
   */
  async read(afterSeq?: number | null, maxBytes?: number | null, waitMs?: number | null): Promise<ReadResponse> {
    if (waitMs !== undefined && waitMs !== null && waitMs > 0) await this.waitForEventAfter(afterSeq ?? 0, waitMs);
    try {
      return await firstValueFrom(this.client.call('process/read', { processId: this.processId, afterSeq: afterSeq ?? 0, maxBytes: maxBytes ?? null, waitMs: 0 }));
    } catch (error: unknown) {
      if (!isTerminal(this.client.state) || !(error instanceof BaseError)) throw error;
      return { chunks: [], nextSeq: this.highestSeenSeq + 1, exited: true, exitCode: null, closed: true, failure: error.message, sandboxDenied: false };
    }
  }

  /**
   * Writes bytes to stdin (requires `pipeStdin` or `tty`). Each logical write gets a fresh writeId; after a
   * reconnect it is sent again with the same writeId, which the executor deduplicates. Writes larger than
   * a safe frame are split. Resolves with the executor's status (`accepted`, `unknownProcess`, `stdinClosed`,
   * `starting`). Note: the 0.171.0 executor offers no way to close stdin.
   */
  async write(bytes: Uint8Array | string): Promise<WriteResponse['status']> {
    const data = toBytes(bytes);
    let status: WriteResponse['status'] = 'accepted';
    for (let offset = 0; offset === 0 || offset < data.byteLength; offset += SAFE_CHUNK_BYTES) {
      const chunk = data.subarray(offset, offset + SAFE_CHUNK_BYTES);
      this.writeCounter += 1;
      const writeId = String(this.writeCounter);
      status = (await firstValueFrom(this.client.call('process/write', { processId: this.processId, chunk, writeId }))).status;
      if (status !== 'accepted') return status;
    }
    return status;
  }

  /** Sends SIGINT (`interrupt`, the only signal 0.171.0 knows); exit code 130 follows. */
  async signal(signal: 'interrupt' = 'interrupt'): Promise<void> {
    await firstValueFrom(this.client.call('process/signal', { processId: this.processId, signal }));
  }

  /** Kills the process group; resolves `true` if it was running. Exit code 137, then `closed`, follow. */
  async terminate(): Promise<boolean> {
    return (await firstValueFrom(this.client.call('process/terminate', { processId: this.processId }))).running;
  }

  /** Releases the retained history once the process is closed and nobody wants its replay any more. */
  release(): void {
    this.history.release();
  }

  /** @internal ProcessSink: routes this process's notifications from `rpc`, until the process ends. */
  bind(rpc: RpcConnection): Subscription {
    const route = rpc.processEvents(this.processId).subscribe((event) => this.onWire(event));
    if (this.isDone()) route.unsubscribe();
    else this.routes.add(route);
    route.add(() => this.routes.delete(route));
    return route;
  }

  /** @internal ProcessSink: merges a recovery read through the reorder buffer. Throws typed errors. */
  recover(read: ReadResponse): void {
    if (this.isDone()) return;
    this.noteSeq(read.nextSeq - 1);
    this.publish(mergeRecoveryRead(this.buffer, read));
  }

  /** @internal ProcessSink: fails the process (terminal). */
  fail(error: ExecClientError): void {
    if (this.isDone()) return;
    this.stateValue = 'failed';
    this.holeTimer?.unsubscribe();
    const failure = error instanceof ProcessFailedError || error.code === 'PROCESS_GAP' ? error : new ProcessFailedError(this.processId, `process ${this.processId} failed: ${error.message}`, { cause: error });
    this.history.append({ type: 'failed', error: failure });
    this.ended();
  }

  private onWire(event: ProcessWireEvent): void {
    if (this.isDone()) return;
    if (event.type === 'malformed') return this.fillHole();
    this.noteSeq(event.seq);
    try {
      this.publish(this.buffer.push(event));
    } catch (error: unknown) {
      this.failAndTerminate(error);
    }
  }

  private publish(events: readonly SequencedEvent[]): void {
    for (const event of events) {
      if (event.type === 'exited') {
        this.exitCodeValue = event.exitCode;
        if (this.stateValue === 'running') this.stateValue = 'exited';
      }
      if (event.type === 'closed') this.stateValue = 'closed';
      this.history.append(event);
    }
    if (this.stateValue === 'closed') return this.ended();
    if (this.buffer.missingRange() !== undefined) this.scheduleHoleFill();
  }

  /** Closed or failed: drop the routes, the hole timer and the client's registration. */
  private ended(): void {
    this.holeTimer?.unsubscribe();
    for (const route of [...this.routes]) route.unsubscribe();
    this.client.removeProcess(this.processId);
  }

  private scheduleHoleFill(): void {
    if (this.holeTimer !== undefined && !this.holeTimer.closed) return;
    this.holeTimer = timer(this.holeFillDelayMs, this.scheduler).subscribe(() => {
      if (this.buffer.missingRange() !== undefined) this.fillHole();
    });
  }

  /** A hole (malformed or lost notification) is filled by a `process/read` from the last published seq. */
  private fillHole(): void {
    if (this.fillingHole || this.isDone()) return;
    this.fillingHole = true;
    this.client.call('process/read', { processId: this.processId, afterSeq: this.lastPublishedSeq, maxBytes: null, waitMs: 0 }).subscribe({
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
        if (!this.isDone()) this.fail(error instanceof BaseError ? error : new ProtocolError(String(error)));
      },
    });
  }

  private failAndTerminate(error: unknown): void {
    this.fail(error instanceof BaseError ? error : new ProtocolError(String(error)));
    this.client.call('process/terminate', { processId: this.processId }).subscribe({ error: () => undefined });
  }

  private waitForEventAfter(afterSeq: number, waitMs: number): Promise<unknown> {
    const arrived$ = this.events$.pipe(filter((e) => e.type === 'failed' || e.type === 'closed' || (e.type !== 'truncated' && e.seq > afterSeq)), take(1));
    return firstValueFrom(race(arrived$, timer(waitMs, this.scheduler)), { defaultValue: undefined });
  }

  private noteSeq(seq: number): void {
    if (seq > this.highestSeenSeq) this.highestSeenSeq = seq;
  }

  private isDone(): boolean {
    return this.stateValue === 'closed' || this.stateValue === 'failed';
  }
}
