/**
 * The requests one process makes of the executor on its session: `process/read` (after a local wait),
 * `process/write` (in safe chunks, one writeId each, counted across restarts), `process/signal` and
 * `process/terminate`.
 */
import type { SchedulerLike } from 'rxjs';
import { firstValueFrom, race, timer } from 'rxjs';
import { filter, take } from 'rxjs/operators';
import { ExecClientError, StdinClosedError } from '../errors';
import type { AbortOptions } from '../rpc/abort';
import { abortable, isAbortOf } from '../rpc/abort';
import type { ExecSession } from '../session/exec-session';
import { isTerminal } from '../session/exec-session';
import { toBytes } from '../wire/bytes';
import { SAFE_CHUNK_BYTES } from '../wire/limits';
import type { ReadResponse } from '../wire/process';
import type { OutputHistoryReader } from './output-history';

/** How many writeIds (`process/write` calls) `ExecProcess.write` uses for `byteLength` bytes: one per safe frame, at least one. */
export const writeIdsFor = (byteLength: number): number => Math.max(1, Math.ceil(byteLength / SAFE_CHUNK_BYTES));

/** One process's requests (see `ExecProcess.read`, `write`, `interrupt` and `terminate`, which document them). */
export class ProcessRequests {
  private writeCounter: number;

  /** `nextWriteId`: the writeId of the first write (an adopted process's goes on from the host's count). */
  constructor(
    private readonly processId: string,
    private readonly session: ExecSession,
    /** The process's history: a read's local wait watches its events. */
    private readonly history: OutputHistoryReader,
    /** The process's inbox: a failed read's synthesized answer goes on after the highest seq it saw. */
    private readonly inbox: { readonly highestSeenSeq: number },
    private readonly scheduler: SchedulerLike,
    nextWriteId = 1,
  ) {
    this.writeCounter = nextWriteId - 1;
  }

  /** The writeId the next write will use. */
  get nextWriteId(): number {
    return this.writeCounter + 1;
  }

  /** `process/read` from `afterSeq`, after waiting (at most `waitMs`) for a local event after it; a synthesized answer once the environment failed. */
  async read(afterSeq: number, maxBytes: number | null, waitMs: number | null | undefined, options: AbortOptions): Promise<ReadResponse> {
    const { signal } = options;
    if (waitMs !== undefined && waitMs !== null && waitMs > 0) await this.waitForEventAfter(afterSeq, waitMs, signal);
    const processId = this.processId;
    try {
      return await firstValueFrom(this.session.call('process/read', { processId, afterSeq, maxBytes, waitMs: 0 }, signal === undefined ? {} : { signal }));
    } catch (error: unknown) {
      if (!isTerminal(this.session.state) || !(error instanceof ExecClientError) || isAbortOf(signal, error)) throw error;
      return { chunks: [], nextSeq: this.inbox.highestSeenSeq + 1, exited: true, exitCode: null, closed: true, failure: error.message, sandboxDenied: false };
    }
  }

  /** `process/write`s of `bytes` in safe chunks, from `firstWriteId` or the next writeId; rejects StdinClosedError at the first refusal. */
  async write(bytes: Uint8Array | string, firstWriteId: number | undefined, options: AbortOptions): Promise<void> {
    const signal = options.signal;
    if (signal?.aborted === true) throw signal.reason;
    const call = signal === undefined ? {} : { signal };
    const data = toBytes(bytes);
    const processId = this.processId;
    let next = firstWriteId ?? this.writeCounter + 1;
    for (let offset = 0; offset === 0 || offset < data.byteLength; offset += SAFE_CHUNK_BYTES) {
      const chunk = data.subarray(offset, offset + SAFE_CHUNK_BYTES);
      this.writeCounter = Math.max(this.writeCounter, next);
      const writeId = String(next);
      next += 1;
      const { status } = await firstValueFrom(this.session.call('process/write', { processId, chunk, writeId }, call));
      if (status !== 'accepted') throw new StdinClosedError(processId, status);
    }
  }

  /** `process/signal` with `interrupt`. */
  async interrupt(options: AbortOptions): Promise<void> {
    await firstValueFrom(this.session.call('process/signal', { processId: this.processId, signal: 'interrupt' }, options));
  }

  /** `process/terminate`: whether it was running. */
  async terminate(options: AbortOptions): Promise<boolean> {
    return (await firstValueFrom(this.session.call('process/terminate', { processId: this.processId }, options))).running;
  }

  private waitForEventAfter(afterSeq: number, waitMs: number, signal: AbortSignal | undefined): Promise<unknown> {
    const arrived$ = this.history.eventsAfter$(0).pipe(filter((e) => e.type === 'failed' || e.type === 'closed' || (e.type !== 'truncated' && e.seq > afterSeq)), take(1));
    return firstValueFrom(race(arrived$, timer(waitMs, this.scheduler)).pipe(abortable(signal)), { defaultValue: undefined });
  }
}
