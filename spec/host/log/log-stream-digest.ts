/**
 * Helpers of the host output log specs that move tens to hundreds of MB through SSE: a reader that
 * keeps no events (stdout hashed as it comes, seqs checked for contiguity, markers and the last event
 * kept), the expected digests of a `seq 1 N` output computed by the shell, and a clock offset.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';
import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { SchedulerAction, SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { SseParser } from '../../support/sse-parser';

/** A `truncated` marker's data, as the host sends it. */
export interface MarkerData {
  readonly nextSeq: number;
  readonly droppedEvents: number;
  readonly droppedBytes: number;
  readonly reason: string;
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** What a {@link digestStream} read. */
export interface StreamDigest {
  readonly status: number;
  /** `end`: the host finished the body; `cut`: it broke off first. */
  readonly end: 'end' | 'cut';
  /** sha256 hex of every stdout byte, in order. */
  readonly sha256: string;
  readonly stdoutBytes: number;
  readonly outputs: number;
  /** The first and last `id:` seen (undefined when none). */
  readonly firstSeq: number | undefined;
  readonly lastSeq: number | undefined;
  /** Seqs that did not follow the one before (or the marker's nextSeq): `expected->got`, the first 10. */
  readonly gaps: readonly string[];
  readonly markers: readonly MarkerData[];
  /** The stdout bytes received before each marker. */
  readonly markerAtBytes: readonly number[];
  /** The last event's type and data. */
  readonly last: { readonly event: string; readonly data: Record<string, unknown> } | undefined;
  /** stdout sha256 and bytes of the events after each seq of `suffixAfter`. */
  readonly suffixes: ReadonlyMap<number, { readonly sha256: string; readonly bytes: number }>;
  /** Stdout bytes of the events up to and including each seq in `bytesUpTo`. */
  readonly bytesAt: ReadonlyMap<number, number>;
  /** The body of a non-200 answer. */
  readonly text: string;
}

/** Options of {@link digestStream}. */
export interface DigestOptions {
  readonly url: string;
  readonly token: string;
  readonly lastEventId?: number;
  /** Sent as `?after=` (instead of or besides `Last-Event-ID`). */
  readonly after?: number;
  /** Also hash the stdout of the events after each of these seqs apart. */
  readonly suffixAfter?: readonly number[];
  /** Record the stdout bytes received up to these seqs. */
  readonly bytesUpTo?: readonly number[];
  /** Called with the response once its head arrived (a spec pauses it there). */
  readonly onResponse?: (res: IncomingMessage) => void;
  /** Called with each event's type and seq as it is parsed. */
  readonly onEvent?: (event: string, seq: number | undefined) => void;
}

/** Reads one event stream request to its end (one connection, no resume), keeping only digests. */
export function digestStream(options: DigestOptions): Promise<StreamDigest> {
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  return new Promise<StreamDigest>((resolve, reject) => {
    const url = options.after === undefined ? options.url : `${options.url}?after=${options.after}`;
    const req = request(url, { agent: false, headers });
    req.once('error', reject);
    req.once('response', (res) => {
      const hash = createHash('sha256');
      const suffixes = new Map<number, { hash: Hash; bytes: number }>();
      const wanted = new Set(options.bytesUpTo ?? []);
      const bytesAt = new Map<number, number>();
      const gaps: string[] = [];
      const markers: MarkerData[] = [];
      const markerAtBytes: number[] = [];
      const texts: Buffer[] = [];
      let stdoutBytes = 0;
      let outputs = 0;
      let firstSeq: number | undefined;
      let lastSeq: number | undefined;
      let expected: number | undefined = (options.after ?? options.lastEventId ?? 0) + 1;
      let last: StreamDigest['last'];
      const parser = new SseParser({
        frame: (frame) => {
          const data = JSON.parse(frame.data) as Record<string, unknown>;
          last = { event: frame.event, data };
          const seq = frame.id === undefined ? undefined : Number(frame.id);
          options.onEvent?.(frame.event, seq);
          if (frame.event === 'truncated') {
            const marker = data as unknown as MarkerData;
            markers.push(marker);
            markerAtBytes.push(stdoutBytes);
            expected = marker.nextSeq;
            return;
          }
          if (seq === undefined) return;
          if (seq !== expected && gaps.length < 10) gaps.push(`${String(expected)}->${seq}`);
          expected = seq + 1;
          firstSeq ??= seq;
          lastSeq = seq;
          if (frame.event === 'output' && data['stream'] === 'stdout') {
            const chunk = Buffer.from(String(data['chunk']), 'base64');
            outputs += 1;
            stdoutBytes += chunk.byteLength;
            hash.update(chunk);
            for (const suffix of suffixes.values()) {
              suffix.hash.update(chunk);
              suffix.bytes += chunk.byteLength;
            }
          }
          if (wanted.has(seq)) bytesAt.set(seq, stdoutBytes);
          if (options.suffixAfter?.includes(seq) === true) suffixes.set(seq, { hash: createHash('sha256'), bytes: 0 });
        },
      });
      const sse = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
      let complete = false;
      res.on('data', (chunk: Buffer) => (sse ? parser.push(chunk) : texts.push(chunk)));
      res.once('end', () => (complete = true));
      res.on('error', () => undefined);
      res.once('close', () =>
        resolve({
          status: res.statusCode ?? 0,
          end: complete ? 'end' : 'cut',
          sha256: hash.digest('hex'),
          stdoutBytes,
          outputs,
          firstSeq,
          lastSeq,
          gaps,
          markers,
          markerAtBytes,
          last,
          suffixes: new Map([...suffixes].map(([seq, suffix]) => [seq, { sha256: suffix.hash.digest('hex'), bytes: suffix.bytes }])),
          bytesAt,
          text: Buffer.concat(texts).toString('utf8'),
        }),
      );
      options.onResponse?.(res);
    });
    req.end();
  });
}

/** Runs `sh -c script` and gives its stdout trimmed. */
export function shell(script: string): Promise<string> {
  return new Promise<string>((resolve, reject) =>
    execFile('/bin/sh', ['-c', script], { maxBuffer: 1024 * 1024 }, (error, stdout) => (error === null ? resolve(stdout.trim()) : reject(error))),
  );
}

/** sha256 hex and length of what `producer` (a shell pipeline) writes, optionally cut by `filter` (`head -c N`, `tail -c N`). */
export async function expectedDigest(producer: string, filter?: string): Promise<{ readonly sha256: string; readonly bytes: number }> {
  const pipe = filter === undefined ? producer : `${producer} | ${filter}`;
  const [hash, bytes] = await Promise.all([shell(`${pipe} | sha256sum`), shell(`${pipe} | wc -c`)]);
  return { sha256: hash.split(' ')[0] ?? '', bytes: Number(bytes) };
}

/**
 * The host's clock, moved forward by hand: `now()` is the real time plus an offset, timers are the
 * asyncScheduler's (real delays), so time "passes" for what the host dates (a log's age, retention)
 * without any wait, while sockets and timers behave as usual.
 */
export class OffsetClock implements SchedulerLike {
  offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription {
    return asyncScheduler.schedule(work, delay, state);
  }
}
