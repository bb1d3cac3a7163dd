/**
 * Reading a process's events (`GET …/events`, SSE) for the workload: one connection at a time (a
 * segment), from a seq (`Last-Event-ID`), to its end or until the reader moves on (a set time, or the
 * stream idle); and a reader that goes on across segments, by the seq it reached (the last seq given or
 * covered by a marker), on a replica or the balancer. Every event is recorded as it came.
 */
import { request } from 'node:http';
import { createParser } from 'eventsource-parser';
import type { ReaderEvent, ReaderHistory, ReaderSegment } from './history';
import { sleep } from './time';

/** Where a reader reads: a replica incarnation's own url, or the balancer's. */
export interface Place {
  readonly where: string;
  readonly base: string;
}

/** How one segment reads. */
export interface SegmentOptions {
  readonly token: string;
  /** Ends the segment (`moved`) after this long, when set. */
  readonly moveAfterMs?: number;
  /** Ends the segment (`idle`) when nothing came this long. */
  readonly idleMs: number;
  /** Ends the segment (`error: …`) when the answer's headers take longer. */
  readonly openTimeoutMs: number;
}

type Fields = Record<string, unknown>;
const num = (fields: Fields, name: string): number | undefined => (typeof fields[name] === 'number' ? fields[name] : undefined);
const str = (fields: Fields, name: string): string | undefined => (typeof fields[name] === 'string' ? fields[name] : undefined);

/** An SSE event as the workload records it; undefined for one it does not know (an overview, a comment). */
function decode(name: string, data: string, segment: number): ReaderEvent | undefined {
  let fields: Fields;
  try {
    fields = JSON.parse(data) as Fields;
  } catch {
    return undefined;
  }
  const seq = num(fields, 'seq') ?? 0;
  switch (name) {
    case 'output':
      return { kind: 'output', seq, data: Buffer.from(str(fields, 'chunk') ?? '', 'base64'), segment };
    case 'exited':
      return { kind: 'exited', seq, exitCode: num(fields, 'exitCode') ?? -1, segment };
    case 'closed':
      return { kind: 'closed', seq, segment };
    case 'failed':
      return { kind: 'failed', code: str(fields, 'code') ?? '', message: str(fields, 'message') ?? '', segment };
    case 'truncated': {
      const nextSeq = num(fields, 'nextSeq') ?? 0;
      const toSeq = num(fields, 'toSeq') ?? nextSeq - 1;
      const fromSeq = num(fields, 'fromSeq') ?? toSeq - (num(fields, 'droppedEvents') ?? 0) + 1;
      return { kind: 'truncated', fromSeq, toSeq, droppedBytes: num(fields, 'droppedBytes') ?? 0, reason: str(fields, 'reason'), segment };
    }
    default:
      return undefined;
  }
}

/** The seq a reader reached after `event` (from `cursor`). */
export function advance(cursor: number, event: ReaderEvent): number {
  if (event.kind === 'truncated') return Math.max(cursor, event.toSeq);
  if (event.kind === 'failed') return cursor;
  return Math.max(cursor, event.seq);
}

/** Reads one segment of `reader` at `place` after `afterSeq`, recording its events; resolves with how it ended. */
export function readSegment(reader: ReaderHistory, place: Place, afterSeq: number, options: SegmentOptions): Promise<ReaderSegment> {
  const segment: ReaderSegment = { where: place.where, afterSeq, at: Date.now(), events: 0, outcome: '' };
  const index = reader.segments.push(segment) - 1;
  const path = `/api/v1/environments/${encodeURIComponent(reader.environmentId)}/processes/${encodeURIComponent(reader.processId)}/events`;
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'text/event-stream' };
  if (afterSeq > 0) headers['last-event-id'] = String(afterSeq);
  return new Promise((resolve) => {
    const timers: NodeJS.Timeout[] = [];
    let idle: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (outcome: string): void => {
      if (done) return;
      done = true;
      segment.outcome = outcome;
      for (const timer of timers) clearTimeout(timer);
      clearTimeout(idle);
      req.destroy();
      resolve(segment);
    };
    const req = request(`${place.base}${path}`, { headers, agent: false }, (res) => {
      clearTimeout(timers[0]);
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () => finish(`refused ${String(res.statusCode)} ${Buffer.concat(chunks).toString('utf8').slice(0, 160)}`));
        res.once('error', () => finish(`refused ${String(res.statusCode)}`));
        return;
      }
      const parser = createParser({
        onEvent: (message) => {
          if (done) return;
          const event = decode(message.event ?? 'message', message.data, index);
          if (event === undefined) return;
          reader.events.push(event);
          segment.events += 1;
          if (event.kind === 'closed' || event.kind === 'failed') finish(event.kind);
        },
      });
      const decoder = new TextDecoder();
      const touch = (): void => {
        clearTimeout(idle);
        idle = setTimeout(() => finish('idle'), options.idleMs);
      };
      touch();
      if (options.moveAfterMs !== undefined) timers.push(setTimeout(() => finish('moved'), options.moveAfterMs));
      res.on('data', (chunk: Buffer) => {
        touch();
        parser.feed(decoder.decode(chunk, { stream: true }));
      });
      res.once('end', () => finish('ended'));
      res.once('error', (error) => finish(`error: ${error.message}`));
    });
    timers.push(setTimeout(() => finish('error: no answer in time'), options.openTimeoutMs));
    req.once('error', (error) => finish(`error: ${'code' in error && typeof error.code === 'string' ? error.code : error.message}`));
    req.end();
  });
}

/** How a reader goes on across segments. */
export interface FollowOptions extends Omit<SegmentOptions, 'moveAfterMs'> {
  /** How long each segment lasts before the reader moves on (asked per segment); unset: to the end. */
  readonly moveEvery?: () => number;
  /** Where to read next, given the segments so far (a mover changes place; a late reader stays). */
  readonly next: (segments: readonly ReaderSegment[]) => Place;
  /** Gives up past this time (ms, `Date.now()`; asked before each segment). */
  readonly deadline: () => number;
  /** Gives up when it turns true. */
  readonly stop?: () => boolean;
}

/** Reads `reader`'s process from seq 1 to its end across segments (see the module's doc); sets `reader.outcome`. */
export async function follow(reader: ReaderHistory, options: FollowOptions): Promise<void> {
  let cursor = 0;
  let quiet = 0;
  while (Date.now() < options.deadline() && options.stop?.() !== true) {
    const move = options.moveEvery === undefined ? {} : { moveAfterMs: options.moveEvery() };
    const segment = await readSegment(reader, options.next(reader.segments), cursor, { ...options, ...move });
    for (const event of reader.events.filter((one) => one.segment === reader.segments.length - 1)) cursor = advance(cursor, event);
    if (segment.outcome === 'closed') return void (reader.outcome = 'closed');
    if (segment.outcome === 'failed') {
      const last = reader.events.at(-1);
      return void (reader.outcome = `failed ${last?.kind === 'failed' ? last.code : ''}`);
    }
    if (/^refused (400|401|403|404)/.test(segment.outcome)) return void (reader.outcome = segment.outcome);
    // A segment that got nothing (refused, no connection, idle) waits a little before the next.
    quiet = segment.events === 0 ? Math.min(quiet + 250, 2_000) : 0;
    if (quiet > 0) await sleep(quiet);
  }
  reader.outcome = 'gave up';
}
