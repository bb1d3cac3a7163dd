/**
 * One subscriber's event stream (SSE or binary: the sink's framing) of a process's events read from its log (the store's paced reader: a log on
 * disk), at the subscriber's own pace: the log is read by seq (`PacedLogReader.read`) only while the stream has room,
 * what is at or below the cursor is never written, and once caught up the stream waits for the next
 * append (`PacedLogReader.waitFor`), whose events the log serves from memory until they are written.
 *
 * A slow subscriber is never cut for being slow: the log holds what it needs, and the executor is read
 * at full speed whatever the subscriber does. It ends after `closed` or `failed` (a log that could not
 * write gives a `truncated` marker with reason `writeFailed`, then `failed` with LOG_WRITE_FAILED), when
 * the client goes away, or (without `follow`) once it has what the log holds now. A follower at the end
 * of a log that takes no more appends without `closed` asks `afterEnd` what comes next: the same
 * process's log goes on in another object (a restarted host took the process back: read on from the
 * cursor), the process is gone (`failed` PROCESS_GONE with why), or nothing (the stream ends).
 */
import type { Observable, Subscription } from 'rxjs';
import { take } from 'rxjs';
import type { EventSink } from './sse-stream';
import type { ExecClientErrorCode } from '../../errors';
import { ExecClientError } from '../../errors';
import type { LogEvent } from '../../store/log-events';
import type { PacedLogReader } from '../../store/log-store';

/** How much one read of the log takes at most: a few frames' worth, so memory per reader stays small. */
export const LOG_READ_BYTES = 256 * 1024;

/** How {@link streamLogEvents} streams. */
export interface LogStreamOptions {
  /** Wait for what the log takes next (else end once what it holds now was written). */
  readonly follow: boolean;
  /**
   * Asked by a follower that read all of a log that takes no more appends and has no `closed`: emits
   * what comes next (see {@link LogContinuation}), once; completing without a value ends the stream.
   * Unsubscribed when the stream ends first. Absent: the stream ends there.
   */
  readonly afterEnd?: (log: PacedLogReader) => Observable<LogContinuation>;
}

/** What a follower does at the end of a log that takes no more appends without `closed`. */
export type LogContinuation =
  | {
      /** The process's log goes on in `log` (another object than the one read): read on after the cursor. */
      readonly type: 'log';
      readonly log: PacedLogReader;
    }
  | {
      /** Nothing more will come and how the process ended is not known: `failed` with `code` (PROCESS_GONE unless said) and `message`. */
      readonly type: 'gone';
      readonly code?: ExecClientErrorCode;
      readonly message: string;
    }
  | {
      /** The stream ends here. */
      readonly type: 'end';
    };

/**
 * Streams the events of `log` after `afterSeq` into `stream`; with `follow: false`, only what the log
 * holds now, then the stream ends. Returns at once; the stream's end (client gone, host closing) stops it.
 */
export function streamLogEvents(log: PacedLogReader, stream: EventSink, afterSeq: number, options: LogStreamOptions): void {
  void pump(log, stream, afterSeq, options).catch((error: unknown) => {
    const failure = error instanceof ExecClientError ? error : undefined;
    if (!stream.isEnded) stream.write(stream.framing.failed(failure?.code ?? 'HOST_ERROR', failure?.message ?? 'reading the output log failed'));
    stream.end();
  });
}

async function pump(first: PacedLogReader, stream: EventSink, afterSeq: number, { follow, afterEnd }: LogStreamOptions): Promise<void> {
  const gone = ended(stream);
  let log = first;
  let cursor = afterSeq;
  let batch: readonly LogEvent[] = [];
  let memoryFrom = 0;
  let next = 0;
  while (!stream.isEnded) {
    if (next < batch.length) {
      // Written one frame at a time, each only while the stream has room: a slow client is waited for, never cut.
      if (stream.buffered >= stream.highWater) {
        await Promise.race([drained(stream), gone]);
        continue;
      }
      const share = next >= memoryFrom;
      const event = batch[next++];
      if (event === undefined || (event.type !== 'failed' && event.type !== 'truncated' && event.seq <= cursor)) continue;
      if (!stream.write(stream.framing.logEvent(event, share))) return;
      if (event.type === 'closed' || event.type === 'failed') return stream.end();
      cursor = event.type === 'truncated' ? event.nextSeq - 1 : event.seq;
      continue;
    }
    const read = log.readNow(cursor, LOG_READ_BYTES) ?? (await log.read(cursor, LOG_READ_BYTES));
    batch = read.events;
    memoryFrom = read.memoryFrom;
    next = 0;
    if (batch.length > 0 || !read.caughtUp) continue;
    if (read.ended && follow && afterEnd !== undefined) {
      const next = await firstUnlessEnded(afterEnd(log), stream);
      if (next?.type === 'log' && next.log !== log) {
        log = next.log;
        continue;
      }
      if (next?.type === 'gone') stream.write(stream.framing.failed(next.code ?? 'PROCESS_GONE', next.message));
      return stream.end();
    }
    if (read.ended || !follow) return stream.end();
    await Promise.race([log.waitFor(cursor), gone]);
  }
}

/** The first value of `source$`; undefined when it completes without one or the stream ends first (then it is unsubscribed). */
function firstUnlessEnded<T>(source$: Observable<T>, stream: EventSink): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    if (stream.isEnded) return resolve(undefined);
    const subscription: Subscription = source$.pipe(take(1)).subscribe({ next: resolve, error: reject, complete: () => resolve(undefined) });
    stream.onEnd(() => {
      subscription.unsubscribe();
      resolve(undefined);
    });
  });
}

/** Resolves at the client's next `drain` (it took what was sent). */
function drained(stream: EventSink): Promise<void> {
  return new Promise<void>((resolve) => void stream.onDrain(resolve));
}

/** Resolves once the stream ended (the client went away, or the host is closing). */
function ended(stream: EventSink): Promise<void> {
  return new Promise<void>((resolve) => stream.onEnd(resolve));
}
