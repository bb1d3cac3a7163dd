/**
 * One subscriber's SSE stream of a process's events read from its output log on disk, at the
 * subscriber's own pace: the log is read by seq (`OutputLog.read`) only while the stream has room,
 * what is at or below the cursor is never written, and once caught up the stream waits for the next
 * append (`OutputLog.waitFor`), whose events the log serves from memory until they are written.
 *
 * A slow subscriber is never cut for being slow: the log holds what it needs, and the executor is read
 * at full speed whatever the subscriber does. It ends after `closed` or `failed` (a log that could not
 * write gives a `truncated` marker with reason `writeFailed`, then `failed` with LOG_WRITE_FAILED), when
 * the client goes away, or (without `follow`) once it has what the log holds now; following a process
 * whose end is unknown (of before a restart), after `failed` PROCESS_GONE at the end of its log.
 */
import { failedFrame, logFrameOf } from './event-frames';
import type { SseStream } from './sse';
import type { LogEvent } from '../log/log-event';
import type { OutputLog } from '../log/output-log';
import { ExecClientError } from '../../errors';

/** How much one read of the log takes at most: a few frames' worth, so memory per reader stays small. */
export const LOG_READ_BYTES = 256 * 1024;

/** How {@link streamLogEvents} streams. */
export interface LogStreamOptions {
  /** Wait for what the log takes next (else end once what it holds now was written). */
  readonly follow: boolean;
  /**
   * The process's end is unknown (it was running when the host went down): a follower that read all
   * its log gets `failed` with PROCESS_GONE, since nothing more will come and `closed` never will.
   */
  readonly endUnknown?: boolean;
}

/**
 * Streams the events of `log` after `afterSeq` into `stream`; with `follow: false`, only what the log
 * holds now, then the stream ends. Returns at once; the stream's end (client gone, host closing) stops it.
 */
export function streamLogEvents(log: OutputLog, stream: SseStream, afterSeq: number, options: LogStreamOptions): void {
  void pump(log, stream, afterSeq, options).catch((error: unknown) => {
    const failure = error instanceof ExecClientError ? error : undefined;
    if (!stream.isEnded) stream.write(failedFrame(failure?.code ?? 'HOST_ERROR', failure?.message ?? 'reading the output log failed'));
    stream.end();
  });
}

async function pump(log: OutputLog, stream: SseStream, afterSeq: number, { follow, endUnknown = false }: LogStreamOptions): Promise<void> {
  const gone = ended(stream);
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
      if (!stream.write(logFrameOf(event, share))) return;
      if (event.type === 'closed' || event.type === 'failed') return stream.end();
      cursor = event.type === 'truncated' ? event.nextSeq - 1 : event.seq;
      continue;
    }
    const read = await log.read(cursor, LOG_READ_BYTES);
    batch = read.events;
    memoryFrom = read.memoryFrom;
    next = 0;
    if (batch.length > 0 || !read.caughtUp) continue;
    if (read.ended && follow && endUnknown) stream.write(failedFrame('PROCESS_GONE', 'its output log ends here: it was running when the host stopped, how it ended is unknown'));
    if (read.ended || !follow) return stream.end();
    await Promise.race([log.waitFor(cursor), gone]);
  }
}

/** Resolves at the client's next `drain` (it took what was sent). */
function drained(stream: SseStream): Promise<void> {
  return new Promise<void>((resolve) => stream.res.once('drain', resolve));
}

/** Resolves once the stream ended (the client went away, or the host is closing). */
function ended(stream: SseStream): Promise<void> {
  return new Promise<void>((resolve) => stream.onEnd(resolve));
}
