/**
 * `ExecProcess`: a process started on an executor, as its caller holds it: its output (the reading side,
 * `ProcessOutput` in process-output.ts), its state and exit, and its stdin, signals and terminal (the
 * requests it makes of the executor are in process-requests.ts).
 */
import type { Observable } from 'rxjs';
import { asyncScheduler, defer, firstValueFrom, of } from 'rxjs';
import type { ExecClientError } from '../errors';
import type { AbortOptions } from '../rpc/abort';
import { abortable, whileNotAborted } from '../rpc/abort';
import type { ExecSession } from '../session/exec-session';
import type { ReadResponse } from '../wire/process';
import { DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_EVENTS, memoryHistory } from './event-history';
import type { HistoryLaunch, OutputHistoryReader } from './output-history';
import type { CollectedOutput, ProcessExit } from './process-summaries';
import { collectOutput } from './process-summaries';
import { exitCodeOf } from './output-views';
import { DEFAULT_HOLE_FILL_DELAY_MS, ProcessInbox } from './process-inbox';
import { ProcessOutput } from './process-output';
import type { ProcessState } from './process-status';
import { ProcessStatus } from './process-status';
import type { AdoptedCounters, ProcessListener, ProcessStreamOptions } from './process-stream-options';
import { ProcessRequests } from './process-requests';
import type { TtyResizer } from './tty-resizer';
import { resizeOrRefuse } from './tty-resizer';
import type { TtySize } from './tty-size';


/**
 * A process started on an executor. Its events flow in strictly increasing, contiguous seq order, each
 * exactly once, across socket replacements; late subscribers get a bounded replay first. Unsubscribing
 * from any view never stops the process: `terminate()` does.
 */
export class ExecProcess extends ProcessOutput implements OutputHistoryReader {
  private readonly status: ProcessStatus;
  private readonly listener: ProcessListener | undefined;
  /**
   * The requests it makes of the executor, made on the first one; until then the writeId of the next
   * write. Most kept processes never make one, and a `ProcessRequests` costs each of them about 70 bytes.
   */
  private requestsOrNextWriteId: ProcessRequests | number;
  private resizer: TtyResizer | undefined;

  /**
   * The process's state: replays the current one (`running`, `exited`, `closed` or `failed`), then
   * each change; completes after `closed` or `failed`. Never errors; unsubscribing affects nothing else.
   */
  get state$(): Observable<ProcessState> {
    return this.status.state$;
  }

  /** @internal The session's side of the process: notifications, recovery reads, failure. */
  readonly inbox: ProcessInbox;

  /**
   * @internal Built by `ExecBackend.start`, which passes its environment's process list as
   * `options.listener`: it hears each state change and the release of the history.
   */
  constructor(
    /** Our key for the process on the executor (`StartParams.processId`, or a generated UUID). */
    readonly processId: string,
    session: ExecSession,
    options: ProcessStreamOptions = {},
    /** @internal An adopted process: where its seqs and writeIds go on. */
    adopted?: AdoptedCounters,
    /** @internal How a listed process was started, for its history (see `HistoryFactory`). */
    launch?: HistoryLaunch,
  ) {
    const outputHistory =
      options.outputHistory ?? memoryHistory({ maxEvents: options.historyEvents ?? DEFAULT_HISTORY_EVENTS, maxBytes: options.historyBytes ?? DEFAULT_HISTORY_BYTES });
    super(outputHistory(processId, launch), session);
    const scheduler = options.scheduler ?? asyncScheduler;
    const listener = options.listener;
    this.listener = listener;
    // Each state change is heard by the listener (the environment's process list): no closure, see ProcessStatus.
    this.status = new ProcessStatus(processId, listener);
    this.inbox = new ProcessInbox(processId, session, this.history, this.status, scheduler, options.holeFillDelayMs ?? DEFAULT_HOLE_FILL_DELAY_MS, adopted?.lastSeq);
    this.requestsOrNextWriteId = adopted?.nextWriteId ?? 1;
  }

  /**
   * The writeId the next stdin write ({@link write}) will use: a host that may restart persists it
   * with the last seq it holds, and hands both back to `EnvironmentManager.adoptAcceptedWebsocket`
   * (a write sent again after a restart keeps its id; a new one must not reuse one).
   */
  get nextWriteId(): number {
    const requests = this.requestsOrNextWriteId;
    return typeof requests === 'number' ? requests : requests.nextWriteId;
  }

  private get requests(): ProcessRequests {
    const requests = this.requestsOrNextWriteId;
    if (typeof requests !== 'number') return requests;
    const inbox = this.inbox;
    const made = new ProcessRequests(this.processId, inbox.session, this.history, inbox, inbox.scheduler, requests);
    this.requestsOrNextWriteId = made;
    return made;
  }

  /** running, exited (output may still follow), closed, or failed. */
  get state(): ProcessState {
    return this.status.state;
  }

  /** Why the process failed, once its state is `failed`. */
  get failure(): ExecClientError | undefined {
    return this.status.failure;
  }

  /** The last seq published to consumers (0 when none). */
  get lastPublishedSeq(): number {
    return this.inbox.lastPublishedSeq;
  }

  /**
   * The exit code, once, then completes; errors if the process fails before exiting. Kept on the process,
   * so a late subscriber gets it even when the `exited` event has left the bounded history.
   */
  get exitCode$(): Observable<number> {
    return defer(() => {
      const code = this.status.exitCode;
      return code === undefined ? this.events$.pipe(exitCodeOf()) : of(code);
    });
  }

  /** The exit code once the process exited. */
  get exitCode(): number | undefined {
    return this.status.exitCode;
  }
  /**
   * All output as text, one string per stream, once closed (for small outputs and tests). Rejects like
   * the views: when the process fails (its {@link failure}, also once its manager closed), or
   * history was truncated before the call (ReplayTruncatedError).
   *
   * `options.signal`: an abort rejects with `signal.reason` and stops collecting (its views are
   * unsubscribed); it does not stop the process, which runs on and can still be read or collected again.
   */
  collect(options: AbortOptions = {}): Promise<CollectedOutput> {
    return collectOutput((stream) => this.text$(stream), this.exitCode$, options.signal);
  }

  /**
   * Resolves with `{ exitCode }` once the process has exited: at once when it already has, even after
   * its `exited` event left the bounded history (the process keeps its exit code). Output may still
   * follow until `closed` (see {@link collect} to wait for it). Rejects with the process's
   * {@link failure} when it fails before exiting: a ProcessFailedError (or ProcessGapError) whose `cause`
   * says why, e.g. the ClosedError of its manager's close (a close settles every wait) or the
   * environment's failure.
   *
   * `options.signal`: an abort rejects with `signal.reason` and stops waiting; it leaves the process
   * running (call {@link terminate} to stop it).
   */
  wait(options: AbortOptions = {}): Promise<ProcessExit> {
    return firstValueFrom(this.status.exit$(this.processId).pipe(abortable(options.signal)));
  }

  /**
   * Reads retained output after `afterSeq` from the executor. With `waitMs > 0` it waits on the local
   * event stream first (at most `waitMs`), then asks with `waitMs: 0`: the executor runs one request at
   * a time per connection, so a server-side long poll would hold up every other call. Waits during
   * recovery and is sent again after it; once the environment failed it resolves with a synthesized
   * response whose `failure` names the error, as codex does.
   *
   * `options.signal`: an abort rejects with `signal.reason`, during the local wait or the call (a read
   * changes nothing on the executor, so there is nothing to undo).
   */
  read(afterSeq?: number | null, maxBytes?: number | null, waitMs?: number | null, options: AbortOptions = {}): Promise<ReadResponse> {
    return this.requests.read(afterSeq ?? 0, maxBytes ?? null, waitMs, options);
  }

  /**
   * Writes bytes to stdin (requires `pipeStdin` or `tty`). Each logical write gets a fresh writeId; after a
   * reconnect it is sent again with the same writeId, which the executor deduplicates. Writes larger than
   * a safe frame are split. Resolves once the executor took every chunk; rejects with StdinClosedError
   * (code `STDIN_CLOSED`, its `status` the executor's answer: `stdinClosed`, `unknownProcess` or
   * `starting`) when it refused one (no later chunk is sent), or with the call's typed error. Note: the
   * 0.171.0 executor offers no way to close stdin.
   *
   * `firstWriteId` (a host that persists its writes): the write's chunks go out as writeIds
   * `firstWriteId`, `firstWriteId + 1` ... (one per `SAFE_CHUNK_BYTES`, 4 MiB, of `bytes`) instead of the next ones, and
   * the counter goes on after the last of them if it was behind. Sent again with the same bytes and the
   * same `firstWriteId` (after a restart), the executor drops the chunks it already has.
   *
   * `options.signal`: an abort rejects with `signal.reason` and sends no further chunk. It does not
   * undo what was sent: a chunk already sent stays written (or is written once the connection is back),
   * and its writeId stays used, so the next write goes on after it.
   */
  write(bytes: Uint8Array | string, firstWriteId?: number, options: AbortOptions = {}): Promise<void> {
    return this.requests.write(bytes, firstWriteId, options);
  }

  /**
   * Interrupts the process (SIGINT: the wire's `process/signal` with `interrupt`, the only signal 0.171.0
   * knows), as `HostClient.interrupt` and the operator API's `…/interrupt` do; exit code 130 follows.
   * Resolves once the executor took it; rejects with the call's typed error. `options.signal`: an abort
   * rejects with `signal.reason`; an interrupt already sent is still delivered.
   */
  interrupt(options: AbortOptions = {}): Promise<void> {
    return this.requests.interrupt(options);
  }

  /**
   * Kills the process group; resolves `true` if it was running. Exit code 137, then `closed`, follow.
   * `options.signal`: an abort rejects with `signal.reason` (also while it waits for recovery, where it
   * would be sent again); a terminate already sent still kills the process.
   */
  terminate(options: AbortOptions = {}): Promise<boolean> {
    return this.requests.terminate(options);
  }

  /**
   * The terminal size last applied, for a process started with `tty: { rows, cols }` that got it; else
   * `undefined` (so too for a sized tty taken back after a host restart, until a resize was applied).
   */
  get ttySize(): TtySize | undefined {
    return this.resizer?.size;
  }

  /**
   * Resizes the process's terminal (it gets SIGWINCH). Resizes are coalesced: at most one helper process
   * runs on the executor at a time, and the last size asked wins. Resolves once this size (or a later
   * one) was applied. Rejects with InvalidTtySizeError for a bad size, ResizeFailedError when the process
   * has no sized terminal (`unsized`), has ended (`ended`) or the helper failed (`failed`); a failed
   * resize never affects the process.
   *
   * `options.signal`: an abort rejects with `signal.reason` and stops waiting (an already-aborted
   * signal rejects at once, nothing asked). A size already asked for may still be applied.
   */
  resize(rows: number, cols: number, options: AbortOptions = {}): Promise<void> {
    return whileNotAborted(options.signal, () => resizeOrRefuse(this.resizer, this.processId, rows, cols));
  }

  /** @internal Resolves once the history is ready for the start to be sent (see `OutputHistory.ready`); never rejects. */
  historyReady(): Promise<void> | undefined {
    return this.history.ready?.();
  }

  /** @internal Set by the sized tty start (`exec/tty-wrapper`). */
  attachResizer(resizer: TtyResizer): void {
    this.resizer = resizer;
  }

  /**
   * Releases the retained history (nobody wants its replay any more) and takes the process off its
   * environment's process list once it has ended. Live subscribers keep receiving. Idempotent.
   */
  release(): void {
    this.history.release();
    this.listener?.released(this.processId);
  }

  /**
   * @internal The start was refused (before it was sent, or by the executor): the process never ran. Its
   * history is discarded (`OutputHistory.discard`: a store keeps nothing of it), else released.
   */
  discard(): void {
    if (this.history.discard === undefined) this.history.release();
    else this.history.discard();
    this.listener?.released(this.processId);
  }
}
