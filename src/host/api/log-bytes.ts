/**
 * `GET …/processes/{processId}/log`: a process's output bytes as they came, read from its output log
 * on disk at the client's pace (`res.write`, waiting for `drain`; never the whole log in memory), what
 * the log holds at the request and no more (no follow).
 *
 * Query parameters (each at most once):
 * - `stream`: which streams (`stdout`, `stderr`, `pty`), repeatable or a comma list; default all.
 * - `tail`: only the end, like `kubectl logs --tail` / `--limit-bytes` from the end: `N` (the last N
 *   lines; a last line without its newline counts) or `Nb` (the last N bytes), of the selected output.
 * - `since`: only events the host received at or after this time: RFC 3339 (`2026-12-01T16:00:00Z`) or
 *   ms since the epoch.
 *
 * Ranges the log cannot give (dropped by its quota, damaged, never written) are skipped: the answer's
 * bytes are what the log holds; the events route's `truncated` markers say what is missing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LogEvent, TimedEvent } from '../../store/log-events';
import type { PacedLogReader } from '../../store/log-store';
import type { OutputEvent } from '../../wire/process-event';
import { ApiProblem } from './problem';

/** How much one read of the log takes at most. */
const READ_BYTES = 256 * 1024;
/** The largest `tail` in lines (the line starts kept while scanning: 8 bytes each). */
export const MAX_TAIL_LINES = 1_000_000;

type StreamName = OutputEvent['stream'];
const STREAMS: readonly StreamName[] = ['stdout', 'stderr', 'pty'];

/** What the query selects. */
export interface LogSelection {
  /** The streams whose bytes are given. */
  readonly streams: ReadonlySet<StreamName>;
  /** Only the last lines or bytes, if given. */
  readonly tail: { readonly lines: number } | { readonly bytes: number } | undefined;
  /** Only events received at or after this time (ms since the epoch), if given. */
  readonly since: number | undefined;
}

const bad = (detail: string): ApiProblem => new ApiProblem(400, 'INVALID_REQUEST', detail);

function once(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw bad(`${name} may be given once`);
  return values[0];
}

/** The selection `query` asks for. Throws ApiProblem 400 for a value out of its syntax. */
export function logSelectionOf(query: URLSearchParams): LogSelection {
  const named = query.getAll('stream').flatMap((value) => value.split(','));
  const streams = new Set<StreamName>();
  for (const name of named) {
    const stream = STREAMS.find((candidate) => candidate === name.trim());
    if (stream === undefined) throw bad('stream must be stdout, stderr or pty (repeated or a comma list)');
    streams.add(stream);
  }
  return { streams: streams.size === 0 ? new Set(STREAMS) : streams, tail: tailOf(once(query, 'tail')), since: sinceOf(once(query, 'since')) };
}

function tailOf(raw: string | undefined): LogSelection['tail'] {
  if (raw === undefined) return undefined;
  const match = /^(0|[1-9][0-9]{0,14})(b?)$/.exec(raw);
  const count = match === null ? NaN : Number(match[1]);
  if (match === null || (match[2] === '' && count > MAX_TAIL_LINES)) throw bad(`tail must be N (lines, at most ${MAX_TAIL_LINES}) or Nb (bytes)`);
  return match[2] === 'b' ? { bytes: count } : { lines: count };
}

function sinceOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (/^(0|[1-9][0-9]{0,15})$/.test(raw)) return Number(raw);
  const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
  const time = rfc3339.test(raw) ? Date.parse(raw.replace(' ', 'T')) : NaN;
  if (!Number.isFinite(time)) throw bad('since must be an RFC 3339 time or ms since the epoch');
  return time;
}

const selected = (event: LogEvent, selection: LogSelection): event is Extract<TimedEvent, { type: 'output' }> =>
  event.type === 'output' && selection.streams.has(event.stream) && (selection.since === undefined || event.time >= selection.since);

/**
 * Reads the selected output of `log` up to `lastSeq` (what it holds now), handing each chunk to `take`
 * (awaited: the caller's pace) with its offset in the selected bytes, until `stopped()`. Resolves with
 * the selected bytes' total.
 */
async function scan(
  log: PacedLogReader,
  lastSeq: number,
  selection: LogSelection,
  take: (chunk: Uint8Array, offset: number) => Promise<void> | void,
  stopped: () => boolean = () => false,
): Promise<number> {
  let cursor = 0;
  let offset = 0;
  for (;;) {
    if (stopped()) return offset;
    const read = await log.read(cursor, READ_BYTES);
    for (const event of read.events) {
      if (event.type !== 'failed' && event.type !== 'truncated' && event.seq > lastSeq) return offset;
      if (!selected(event, selection)) continue;
      await take(event.chunk, offset);
      offset += event.chunk.byteLength;
    }
    if (read.events.length === 0 || read.caughtUp || read.lastSeq >= lastSeq) return offset;
    cursor = read.lastSeq;
  }
}

/** The offset in the selected bytes where the tail starts (a first pass over the log, keeping only line starts). */
async function tailStart(log: PacedLogReader, lastSeq: number, selection: LogSelection): Promise<number> {
  const tail = selection.tail;
  if (tail === undefined) return 0;
  if ('bytes' in tail) return Math.max(0, (await scan(log, lastSeq, selection, () => undefined)) - tail.bytes);
  // Line starts: 0 and each byte after a newline (a newline at the very end starts no line); the
  // last `lines + 1` of them kept in a ring.
  const ring = new Float64Array(tail.lines + 1);
  let count = 0;
  const push = (start: number): void => void (ring[count++ % ring.length] = start);
  push(0);
  const total = await scan(log, lastSeq, selection, (chunk, offset) => {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) push(offset + i + 1);
  });
  const at = (fromEnd: number): number => ring[(count - fromEnd) % ring.length] ?? 0;
  if (at(1) === total) count--;
  if (tail.lines === 0) return total;
  return count < tail.lines ? 0 : at(tail.lines);
}

/**
 * Answers 200 `application/octet-stream` with the selected bytes of `log` as it is now (HEAD: the
 * headers only). Resolves once written, or once the client went away; a log that cannot be read
 * cuts the body short (the connection is destroyed: no clean end). Never rejects.
 */
export async function sendLogBytes(req: IncomingMessage, res: ServerResponse, log: PacedLogReader, selection: LogSelection, headers: Record<string, string>): Promise<void> {
  const lastSeq = log.lastSeq;
  res.writeHead(200, { ...headers, 'content-type': 'application/octet-stream', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  if (req.method === 'HEAD') return void res.end();
  let gone = res.destroyed;
  const onClose = (): void => void (gone = true);
  res.once('close', onClose);
  try {
    const start = await tailStart(log, lastSeq, selection);
    await scan(log, lastSeq, selection, async (chunk, offset) => {
      if (gone || offset + chunk.byteLength <= start) return;
      const part = offset >= start ? chunk : chunk.subarray(start - offset);
      if (!res.write(part)) await drained(res);
    }, () => gone);
    if (!gone) res.end();
  } catch {
    // The headers went: a read failure can only cut the body short (the client sees no clean end).
    res.destroy();
  } finally {
    res.off('close', onClose);
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
