/**
 * One process's output log on disk: append-only segments of CRC'd records in the process's directory,
 * each with a sparse index, a manifest for what the quota dropped. One writer (the host, for a running
 * process) appends; any number of readers pull by seq at their own pace.
 */
import type { Observable } from 'rxjs';
import { BehaviorSubject, filter, firstValueFrom, map, Subject } from 'rxjs';
import type { OutputLogError } from '../../../errors';
import type { SequencedEvent } from '../../../wire/process-event';
import type { LogRead } from '../../log-events';
import type { PacedLogReader } from '../../log-store';
import { LogReadRun } from './log-reader';
import { recoveredState } from './log-recovery';
import type { LogEnd } from './log-state';
import { LogState } from './log-state';
import { LogWriter } from './log-writer';
import { takeEvent, takeGap } from './log-append';
import type { LogHooks, OutputLogOptions, ResolvedLogOptions } from './output-log-options';
import { resolveLogOptions } from './output-log-options';

/**
 * A process's output log (see the module's doc). Make a new one with {@link OutputLog.create} (it
 * takes appends), open one found on disk with {@link OutputLog.open} (sealed: read only). Its owner
 * ends it with `close()` (or `remove()`); a `closed` event appended ends the writing by itself.
 */
export class OutputLog implements PacedLogReader {
  /** Read at the reader's own pace (see `PacedLogReader`). */
  readonly pace = 'own';
  private readonly appended: BehaviorSubject<number>;
  private readonly failuresSubject = new Subject<OutputLogError>();
  private finishing: Promise<void> | undefined;
  /** Resolved (and cleared) at the next append or end: what `waitFor` waits on. */
  private nextAppend: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined;

  private constructor(
    private readonly state: LogState,
    private readonly options: ResolvedLogOptions,
    private readonly writer: LogWriter | undefined,
    private readonly hooks: LogHooks = {},
  ) {
    this.appended = new BehaviorSubject<number>(state.lastSeq);
    if (writer === undefined) this.appended.complete();
  }

  /**
   * A new, empty log for `processId` in `dir`, taking appends at once. Nothing is done on disk until
   * the first write: the directory is made then, after `ready` resolves (a replaced log's files are
   * gone); a rejected `ready` or a refused mkdir fails the log (see `failures$`). Never throws.
   */
  static create(dir: string, processId: string, options: OutputLogOptions = {}, hooks: LogHooks = {}, ready: Promise<void> = Promise.resolve()): OutputLog {
    const resolved = resolveLogOptions(options);
    return OutputLog.writing(new LogState(dir, processId, resolved.fs), resolved, hooks, ready);
  }

  /**
   * The log found in `dir`, recovered (a torn last record cut off) and taking appends again: the log of
   * a process a restarted host adopted. Its next append must come after its last record (`lastSeq`);
   * it goes to a new segment (named by its first seq), so the files written before are never appended
   * to. Rejects with OutputLogReadError when its files cannot be read.
   */
  static async reopen(dir: string, processId: string, options: OutputLogOptions = {}, hooks: LogHooks = {}): Promise<OutputLog> {
    const resolved = resolveLogOptions(options);
    const state = await recoveredState(dir, processId, resolved);
    const log = OutputLog.writing(state, resolved, hooks, Promise.resolve());
    log.writer?.rollAtNextAppend();
    return log;
  }

  private static writing(state: LogState, resolved: ResolvedLogOptions, hooks: LogHooks, ready: Promise<void>): OutputLog {
    const made: { log?: OutputLog } = {};
    const writer = new LogWriter(state, {
      ...resolved,
      ready,
      onRoll: () => hooks.onRoll?.(),
      onSync: (ms) => hooks.onSync?.(ms),
      onFailure: (error) => {
        made.log?.failed(error);
        hooks.onFailure?.(error);
      },
    });
    const log = new OutputLog(state, resolved, writer, hooks);
    made.log = log;
    return log;
  }

  /**
   * The log found in `dir`, recovered (a torn last record cut off) and sealed: it takes no appends, and
   * readers end once they have read it. Rejects with OutputLogReadError when its files cannot be read.
   */
  static async open(dir: string, processId: string, options: OutputLogOptions = {}): Promise<OutputLog> {
    const resolved = resolveLogOptions(options);
    const state = await recoveredState(dir, processId, resolved);
    state.end = 'sealed';
    return new OutputLog(state, resolved, undefined);
  }

  /** The process the log belongs to. */
  get processId(): string {
    return this.state.processId;
  }

  /** The last seq appended (0 before the first). */
  get lastSeq(): number {
    return this.state.lastSeq;
  }

  /** The first seq the log holds (the next to come while it holds none). */
  get firstSeq(): number {
    return this.state.firstSeq;
  }

  /** Segment files of the log. */
  get segmentCount(): number {
    return this.state.segments.length;
  }

  /** Segments its quota (or the store's bound) dropped, ever. */
  get droppedSegments(): number {
    return this.state.droppedSegments;
  }

  /** Bytes of the log's segments (records written and queued). */
  get diskBytes(): number {
    return this.state.diskBytes;
  }

  /** Output payload bytes the log holds (what its quota has not dropped). */
  get storedBytes(): number {
    return this.state.segments.reduce((total, segment) => total + segment.payloadBytes, 0);
  }

  /** Events the log holds. */
  get storedEvents(): number {
    return this.state.segments.reduce((total, segment) => total + segment.events, 0);
  }

  /** Bytes taken and not yet written. */
  get backlogBytes(): number {
    return this.writer?.backlogBytes ?? 0;
  }

  /** The write failure, once the disk refused. */
  get failure(): OutputLogError | undefined {
    return this.state.failure;
  }

  /** Why the log takes no more appends (`closed` appended, `failed`, `sealed`, `removed`), or undefined while it does. */
  get end(): LogEnd | undefined {
    return this.state.end;
  }

  /**
   * The last appended seq: the current one at once, then one per append. Completes when the log takes
   * no more appends (`closed` appended, a failure, `seal`, `close`, `remove`; at once for an opened log).
   */
  get appended$(): Observable<number> {
    return this.appended.asObservable();
  }

  /**
   * Backpressure: true when the unwritten backlog reached the high mark (pause the producer), false
   * when it is back at the low mark (resume); the current state at once. Never errors; completes on
   * `close()`. A failed log reports false: nothing is queued any more.
   */
  get pressure$(): Observable<boolean> {
    return this.writer?.pressure.asObservable() ?? new BehaviorSubject(false).asObservable();
  }

  /** The log's write failure: at most one OutputLogError, then it completes (also on `close()`). */
  get failures$(): Observable<OutputLogError> {
    return this.failuresSubject.asObservable();
  }

  /**
   * Appends one event: it is queued (copied into a write buffer), readers see it at once (from memory
   * until it is written), and a write follows in a later turn. Returns false when the unwritten backlog
   * is at the high mark: pause the producer until `whenBelowLowMark()`. Never throws, never blocks.
   *
   * Events must come in increasing seq order: one at or below the last seq (or not a positive safe
   * integer) is ignored. A chunk over 64 MiB, or one the host has no memory to queue, fails the log
   * (`EFBIG`, `UNKNOWN`). After `closed`
   * (which flushes and syncs at once, then closes the files) appends are ignored. After a failure they
   * are counted as lost (readers get a `writeFailed` marker for them) and true is returned.
   */
  append(event: SequencedEvent): boolean {
    const outcome = takeEvent(this.state, this.writer, event, this.options.scheduler);
    if (outcome === 'lost') return true;
    if (outcome === 'taken') {
      this.appended.next(event.seq);
      this.wake();
      if (event.type !== 'output') this.hooks.onLifecycle?.(event);
      if (event.type === 'closed') this.finishWriting('closed');
    }
    return !(this.writer?.pressure.value ?? false);
  }

  /**
   * Records that the seqs after the last one up to `nextSeq - 1` will never come (an adopted process's
   * executor no longer had them), with their bytes when known: readers get one `truncated` marker with
   * reason `evicted` for them, and the next append is `nextSeq`. Ignored when nothing is skipped, or
   * when the log takes no appends. Never throws.
   */
  appendGap(nextSeq: number, droppedBytes: number): void {
    if (!takeGap(this.state, this.writer, nextSeq, droppedBytes, this.options.scheduler)) return;
    this.appended.next(nextSeq - 1);
    this.wake();
  }

  /**
   * The events after `afterSeq`, up to about `maxBytes` of output (at least one event when any is
   * held), from the files then from memory; see {@link LogRead}. Rejects with OutputLogReadError when
   * a file cannot be read; damage is a `truncated` marker, not an error.
   */
  read(afterSeq: number, maxBytes: number): Promise<LogRead> {
    return new LogReadRun(this.state, afterSeq, maxBytes, this.options.readWindowBytes).run();
  }

  /**
   * {@link OutputLog.read} done at once when it needs no file (the events after `afterSeq` are in memory,
   * or there are none yet); undefined when it needs one (then call `read`). Never throws.
   */
  readNow(afterSeq: number, maxBytes: number): LogRead | undefined {
    return new LogReadRun(this.state, afterSeq, maxBytes, this.options.readWindowBytes).runInMemory();
  }

  /** Resolves once the log holds a seq after `afterSeq`, or takes no more appends. Never rejects. */
  async waitFor(afterSeq: number): Promise<void> {
    // Every append (and the end) resolves the one shared promise; a waiter whose seq has not come yet waits again.
    while (this.state.heldSeq <= afterSeq && this.state.end === undefined) {
      this.nextAppend ??= deferred();
      await this.nextAppend.promise;
    }
  }

  /** Resolves once the backlog is at the low mark (at once when it is not over the high one). Never rejects. */
  async whenBelowLowMark(): Promise<void> {
    await firstValueFrom(this.pressure$.pipe(filter((paused) => !paused), map(() => undefined)), { defaultValue: undefined });
  }

  /** Writes and syncs everything taken. Never rejects (a failure goes to `failures$`). */
  async flush(): Promise<void> {
    await this.writer?.flush();
  }

  /** Drops middle segments until the log is at most `limitBytes` (the store's total bound); resolves the bytes freed. */
  async trimTo(limitBytes: number): Promise<number> {
    return (await this.writer?.trimmer.trimTo(limitBytes)) ?? 0;
  }

  /** Takes no more appends: writes and syncs what was taken, closes the files. Readers end once caught up. Idempotent. */
  async seal(): Promise<void> {
    this.finishWriting('sealed');
    await this.finishing;
  }

  /** Seals the log and completes its observables. Idempotent; never rejects. */
  async close(): Promise<void> {
    await this.seal();
    this.failuresSubject.complete();
    this.writer?.pressure.complete();
  }

  /** Closes the log and removes its directory; readers get an `evicted` marker for what they had not read. */
  async remove(): Promise<void> {
    await this.close();
    this.state.end = 'removed';
    await this.state.fs.removeTree(this.state.dir);
  }

  private finishWriting(end: LogEnd): void {
    this.state.end ??= end;
    this.appended.complete();
    this.wake();
    this.finishing ??= this.writer?.close() ?? Promise.resolve();
  }

  private wake(): void {
    const waiting = this.nextAppend;
    this.nextAppend = undefined;
    waiting?.resolve();
  }

  private failed(error: OutputLogError): void {
    this.finishWriting('failed');
    this.failuresSubject.next(error);
    this.failuresSubject.complete();
  }
}

function deferred(): { readonly promise: Promise<void>; readonly resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
