/**
 * What one reader got of one process, checked: every seq given once and in order, or covered by a
 * `truncated` marker (never a silent hole, never a seq twice); the bytes, in order, are the expected
 * output less what the markers cover (sha256-exact when there is none), each marker's byte count, when it
 * gives one, the size of its hole; and how the stream ended.
 */
import { createHash } from 'node:crypto';
import type { ReaderEvent } from './history';

/** A marker a reader got. */
export interface Marker {
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly droppedBytes: number;
  readonly reason: string | undefined;
}

/** What {@link checkEvents} found. */
export interface EventsCheck {
  /** Each problem, said in a line. */
  readonly problems: string[];
  readonly markers: Marker[];
  /** The output bytes, in parts: a new part starts after each marker. */
  readonly parts: Buffer[];
  /** `closed`, `failed <code>`, or `none`. */
  readonly ending: string;
  /** The exit code the `exited` event gave, if one came. */
  readonly exitCode: number | undefined;
}

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex').slice(0, 16);

/** Checks the order and coverage of `events` (see the module's doc); the bytes are checked by {@link checkBytes}. */
export function checkEvents(events: readonly ReaderEvent[]): EventsCheck {
  const problems: string[] = [];
  const markers: Marker[] = [];
  const parts: Buffer[][] = [[]];
  let cursor = 0;
  let ending = 'none';
  let exitCode: number | undefined;
  let closedSeq = 0;
  const sequenced = (seq: number, what: string): boolean => {
    if (seq <= cursor) {
      problems.push(`${what} seq ${seq} again (the reader was at ${cursor})`);
      return false;
    }
    if (seq > cursor + 1) problems.push(`silent gap: seqs ${cursor + 1}..${seq - 1} neither given nor covered by a marker (before ${what} ${seq})`);
    cursor = seq;
    return true;
  };
  for (const event of events) {
    switch (event.kind) {
      case 'output':
        if (sequenced(event.seq, 'output')) parts[parts.length - 1]?.push(event.data);
        break;
      case 'truncated':
        if (event.toSeq <= cursor) {
          problems.push(`marker ${event.fromSeq}..${event.toSeq} for seqs already given (the reader was at ${cursor})`);
          break;
        }
        if (event.fromSeq > cursor + 1) problems.push(`silent gap: seqs ${cursor + 1}..${event.fromSeq - 1} before marker ${event.fromSeq}..${event.toSeq}`);
        if (event.fromSeq <= cursor) problems.push(`marker ${event.fromSeq}..${event.toSeq} covers seqs already given (the reader was at ${cursor})`);
        if (event.reason === undefined || event.reason === '') problems.push(`marker ${event.fromSeq}..${event.toSeq} without a reason`);
        markers.push({ fromSeq: event.fromSeq, toSeq: event.toSeq, droppedBytes: event.droppedBytes, reason: event.reason });
        parts.push([]);
        cursor = event.toSeq;
        break;
      case 'exited':
        if (sequenced(event.seq, 'exited')) exitCode = event.exitCode;
        break;
      case 'closed':
        if (sequenced(event.seq, 'closed')) {
          ending = 'closed';
          closedSeq = event.seq;
        }
        break;
      case 'failed':
        ending = `failed ${event.code}`;
        break;
    }
  }
  // An exit lost with what a marker covers (Redis lost it) is accounted for by the marker (itself checked: justified or not).
  const covered = markers.some((marker) => marker.toSeq === closedSeq - 1);
  if (ending === 'closed' && exitCode === undefined && !covered) problems.push('closed without an exited event before it');
  return { problems, markers, parts: parts.map((chunks) => Buffer.concat(chunks)), ending, exitCode };
}

/**
 * Checks the bytes of `check.parts` against `expected`: the first part is its start; each later part
 * (after a marker) comes later in it, the hole the size the marker says when it says one; and, when the
 * stream closed, the last part reaches its end. Problems are added to `check.problems`.
 */
export function checkBytes(check: EventsCheck, expected: Buffer): void {
  const [first, ...rest] = check.parts;
  if (first === undefined) return;
  if (rest.length === 0 && check.ending === 'closed') {
    if (first.equals(expected)) return;
    check.problems.push(`output ${first.byteLength} B sha256 ${sha(first)}…, expected ${expected.byteLength} B sha256 ${sha(expected)}…${diffAt(first, expected)}`);
    return;
  }
  if (!expected.subarray(0, first.byteLength).equals(first)) check.problems.push(`the output before any marker is not the expected output's start${diffAt(first, expected)}`);
  let at = first.byteLength;
  rest.forEach((part, index) => {
    const marker = check.markers[index];
    if (part.byteLength === 0) return;
    const found = expected.indexOf(part, at);
    if (found < 0) {
      check.problems.push(`the ${part.byteLength} B after marker ${marker?.fromSeq ?? '?'}..${marker?.toSeq ?? '?'} are not found in the expected output after byte ${at}`);
      return;
    }
    if (marker !== undefined && marker.droppedBytes > 0 && found - at !== marker.droppedBytes) {
      check.problems.push(`marker ${marker.fromSeq}..${marker.toSeq} says ${marker.droppedBytes} B dropped, the hole is ${found - at} B`);
    }
    at = found + part.byteLength;
  });
  // A last marker with nothing after it covers the end; else the last bytes must reach it.
  const tailCovered = rest.length > 0 && rest[rest.length - 1]?.byteLength === 0;
  if (check.ending === 'closed' && !tailCovered && at !== expected.byteLength) check.problems.push(`closed at byte ${at} of ${expected.byteLength} expected: silently short`);
}

/** Where two byte strings first differ (for a problem's line). */
function diffAt(got: Buffer, expected: Buffer): string {
  const n = Math.min(got.byteLength, expected.byteLength);
  for (let i = 0; i < n; i++) {
    if (got[i] !== expected[i]) return ` (first difference at byte ${i}: got ${JSON.stringify(got.subarray(i, i + 40).toString('latin1'))})`;
  }
  return got.byteLength === expected.byteLength ? '' : ` (one is a prefix of the other at byte ${n})`;
}

/**
 * Checks an echo's output against the lines written to its stdin: each line of the output is one that
 * was written, none twice, in the order written; with `complete` (it closed, no marker), every accepted
 * write is there. Returns the problems.
 */
export function checkEcho(output: string, writes: readonly { readonly line: string; readonly outcome: string }[], complete: boolean): string[] {
  const problems: string[] = [];
  const order = new Map(writes.map((write, index) => [write.line, index]));
  const seen = new Set<string>();
  let last = -1;
  for (const line of output.split(/(?<=\n)/)) {
    if (line === '') continue;
    const index = order.get(line);
    if (index === undefined) problems.push(`a line never written: ${JSON.stringify(line.slice(0, 80))}`);
    else if (seen.has(line)) problems.push(`stdin line ${index + 1} arrived twice: ${JSON.stringify(line.trim())}`);
    else if (index < last) problems.push(`stdin line ${index + 1} arrived after line ${last + 1}`);
    if (index !== undefined) {
      seen.add(line);
      last = Math.max(last, index);
    }
  }
  if (complete) {
    const missing = writes.filter((write) => write.outcome === 'accepted' && !seen.has(write.line));
    if (missing.length > 0) problems.push(`${missing.length} accepted stdin line(s) never arrived, the first: ${JSON.stringify(missing[0]?.line.trim())}`);
  }
  return problems;
}
