/**
 * A reader made for one kind of frame: the `process/output` notification, the bulk of what an executor
 * sends (docs/performance.md). It reads the frame's text with `charCodeAt`, `indexOf` and `startsWith`,
 * builds no object but the {@link OutputEvent}, and decodes the chunk's base64 span straight from the
 * frame (into the chunk arena for 4–16 KiB chunks), so such a frame skips `JSON.parse` and the objects
 * it makes.
 *
 * It is exact or it declines: it accepts a frame only where `JSON.parse` followed by the connection's
 * own path (the envelope test of `readFrame`, then `outputEventOf`) would accept it, and then returns
 * what that path returns. Whatever it does not recognise in full, it declines, and the caller reads the
 * frame the ordinary way (which also reports a malformed frame). What it accepts:
 *
 * - an object with exactly the members `method` (the string `process/output`, written without escapes)
 *   and `params`, in either order, each once;
 * - `params` an object with exactly `processId`, `seq`, `stream` and `chunk`, in any order, each once:
 *   `processId` a string without escapes or control characters, `seq` a plain integer of at most 16
 *   digits (no sign, fraction or exponent) not above 2^53 − 1, `stream` one of `"stdout"`, `"stderr"`,
 *   `"pty"`, and `chunk` canonical base64 (`decodeCanonical`);
 * - JSON whitespace between any two tokens, and around the whole.
 *
 * It declines frames longer than {@link SCAN_MAX_CHARS}, and the rest: other members (`jsonrpc`, `id`, unknown params), duplicated members, escapes in
 * keys, in `method`, `processId` or `stream` (the chunk needs none: `decodeCanonical` accepts only the
 * base64 alphabet, so an accepted span holds no backslash and is the string `JSON.parse` would make),
 * other numbers, and any text after the object.
 */
import { decodeCanonical } from './base64';
import type { OutputEvent, OutputStream } from './process-event';

/** Where an accepted frame goes: its `processId` and the event it carries. */
export type OutputSink = (processId: string, event: OutputEvent) => void;

const TAB = 9;
const LF = 10;
const CR = 13;
const SPACE = 32;
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const ZERO = 48;
const NINE = 57;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
/** A control character: JSON strings may not hold one unescaped. */
const FIRST_PRINTABLE = 32;
/** 16 digits reach past 2^53 − 1 (9007199254740991); 17 never fit. */
const MAX_SEQ_DIGITS = 16;

// Keys are told apart by their length and text; a key holding an escape matches none of them.
const KEY_METHOD = 1;
const KEY_PARAMS = 2;
const KEY_PROCESS_ID = 4;
const KEY_SEQ = 8;
const KEY_STREAM = 16;
const KEY_CHUNK = 32;
const ALL_PARAMS = KEY_PROCESS_ID | KEY_SEQ | KEY_STREAM | KEY_CHUNK;

const METHOD_VALUE = '"process/output"';
const PERIOD = 46;
const LOWER_E = 101;
const UPPER_E = 69;

/**
 * Reads `text` as a `process/output` notification. When it is one the scanner accepts (see the module
 * comment), decodes the chunk, calls `sink` once with the processId and the event, and returns `true`;
 * otherwise returns `false` having done nothing: no call, no arena space taken. `ascii`: `text` holds
 * ASCII only (see `decodeCanonical`). Never throws (unless `sink` does).
 */
export function scanOutputFrame(text: string, ascii: boolean, sink: OutputSink): boolean {
  if (text.length > SCAN_MAX_CHARS) return false;
  return text.slice(0, EXECUTOR_PREFIX.length) === EXECUTOR_PREFIX ? scanExecutorLayout(text, ascii, sink) : scanAnyLayout(text, ascii, sink);
}

/**
 * Longer frames are declined. With 8 KiB chunks the frames bench spent 1.8–1.9× raw's CPU per frame with
 * the scanner against 1.06–1.20× without it (bench/results/issue-32-scanner.md), although the scanner alone
 * is faster than JSON.parse on such frames; the cause was not found. 4096 characters hold chunks up to
 * 2.9 KiB, below the chunk arena's range.
 */
export const SCAN_MAX_CHARS = 4096;

// Fixed parts are compared as slices (`===` compares their bytes at once): `startsWith` and
// `charCodeAt` loops cost several times more per character.

/** How the executor (serde) writes the frame: members in this order, no whitespace. */
const EXECUTOR_PREFIX = '{"method":"process/output","params":{"processId":"';
const EXECUTOR_SEQ = '","seq":';
const EXECUTOR_STREAM = ',"stream":"';
const EXECUTOR_CHUNK = '","chunk":"';

/**
 * The last processId read in the executor's layout. The next frame's is most likely the same: compared
 * as a slice it needs no character check, and the same string goes on (its hash already computed for
 * the router's Map). It may be a slice of its frame, which it then keeps alive: one frame at most.
 */
let lastProcessId = '';

/**
 * The executor's own layout, `text` known to start with {@link EXECUTOR_PREFIX}. Whitespace around the
 * seq is allowed (the synthetic bench peer pads it); a frame that leaves the layout anywhere else is read
 * by {@link scanAnyLayout}.
 */
function scanExecutorLayout(text: string, ascii: boolean, sink: OutputSink): boolean {
  const processIdStart = EXECUTOR_PREFIX.length;
  const processIdEnd = text.indexOf('"', processIdStart);
  if (processIdEnd === -1) return false;
  let processId = text.slice(processIdStart, processIdEnd);
  if (processId === lastProcessId) processId = lastProcessId;
  else if (stringEnd(text, processIdStart - 1) !== processIdEnd) return false;
  let at = processIdEnd + EXECUTOR_SEQ.length;
  if (text.slice(processIdEnd, at) !== EXECUTOR_SEQ) return scanAnyLayout(text, ascii, sink);
  const seqStart = skipSpace(text, at);
  const seqEnd = digitsEnd(text, seqStart);
  const seq = seqOf(text, seqStart, seqEnd);
  at = skipSpace(text, seqEnd);
  if (seq < 0 || text.slice(at, at + EXECUTOR_STREAM.length) !== EXECUTOR_STREAM) return scanAnyLayout(text, ascii, sink);
  at += EXECUTOR_STREAM.length;
  const streamEnd = text.indexOf('"', at);
  const stream = streamEnd === -1 ? undefined : streamOf(text.slice(at, streamEnd));
  at = streamEnd + EXECUTOR_CHUNK.length;
  if (stream === undefined || text.slice(streamEnd, at) !== EXECUTOR_CHUNK) return scanAnyLayout(text, ascii, sink);
  const chunkEnd = text.indexOf('"', at);
  if (chunkEnd === -1 || chunkEnd + 3 !== text.length || text.charCodeAt(chunkEnd + 1) !== CLOSE_BRACE || text.charCodeAt(chunkEnd + 2) !== CLOSE_BRACE) {
    return scanAnyLayout(text, ascii, sink);
  }
  const chunk = decodeCanonical(text.slice(at, chunkEnd), ascii);
  if (chunk === undefined) return false;
  lastProcessId = processId;
  sink(processId, { type: 'output', seq, stream, chunk });
  return true;
}

const streamOf = (s: string): OutputStream | undefined => (s === 'stdout' ? 'stdout' : s === 'stderr' ? 'stderr' : s === 'pty' ? 'pty' : undefined);

/**
 * Any layout JSON allows: one loop reads the members of both objects (`depth` 0: the envelope, 1:
 * params), each key a bit of `seen`; the positions of the two strings and the seq are kept, and the chunk
 * is decoded only once the whole frame was read.
 */
function scanAnyLayout(text: string, ascii: boolean, sink: OutputSink): boolean {
  let at = skipSpace(text, 0);
  if (text.charCodeAt(at) !== OPEN_BRACE) return false;
  at += 1;
  let depth = 0;
  let seen = 0;
  let processIdStart = 0;
  let processIdEnd = 0;
  let chunkStart = 0;
  let chunkEnd = 0;
  let seq = 0;
  let stream: OutputStream = 'stdout';
  for (;;) {
    at = skipSpace(text, at);
    if (text.charCodeAt(at) !== QUOTE) return false;
    const keyEnd = text.indexOf('"', at + 1);
    const name = keyEnd === -1 ? '' : text.slice(at + 1, keyEnd);
    const key = depth === 0 ? envelopeKey(name) : paramsKey(name);
    if (key === 0 || (seen & key) !== 0) return false;
    seen |= key;
    at = skipSpace(text, keyEnd + 1);
    if (text.charCodeAt(at) !== COLON) return false;
    at = skipSpace(text, at + 1);
    switch (key) {
      case KEY_METHOD:
        if (text.slice(at, at + METHOD_VALUE.length) !== METHOD_VALUE) return false;
        at += METHOD_VALUE.length;
        break;
      case KEY_PARAMS:
        if (text.charCodeAt(at) !== OPEN_BRACE) return false;
        depth = 1;
        at += 1;
        continue;
      case KEY_PROCESS_ID:
        processIdStart = at + 1;
        at = stringEnd(text, at);
        if (at < 0) return false;
        processIdEnd = at;
        at += 1;
        break;
      case KEY_SEQ: {
        const end = digitsEnd(text, at);
        seq = seqOf(text, at, end);
        if (seq < 0) return false;
        at = end;
        break;
      }
      case KEY_STREAM: {
        const end = text.charCodeAt(at) === QUOTE ? text.indexOf('"', at + 1) : -1;
        const known = end === -1 ? undefined : streamOf(text.slice(at + 1, end));
        if (known === undefined) return false;
        stream = known;
        at = end + 1;
        break;
      }
      default:
        // Whether the span is canonical base64 (so holds no escape) is checked once the frame is whole.
        if (text.charCodeAt(at) !== QUOTE) return false;
        chunkStart = at + 1;
        chunkEnd = text.indexOf('"', chunkStart);
        if (chunkEnd === -1) return false;
        at = chunkEnd + 1;
    }
    at = skipSpace(text, at);
    let next = text.charCodeAt(at);
    at += 1;
    if (next === CLOSE_BRACE && depth === 1) {
      if ((seen & ALL_PARAMS) !== ALL_PARAMS) return false;
      depth = 0;
      at = skipSpace(text, at);
      next = text.charCodeAt(at);
      at += 1;
    }
    if (next === CLOSE_BRACE) break;
    if (next !== COMMA) return false;
  }
  if (seen !== (KEY_METHOD | KEY_PARAMS | ALL_PARAMS) || skipSpace(text, at) !== text.length) return false;
  const chunk = decodeCanonical(text.slice(chunkStart, chunkEnd), ascii);
  if (chunk === undefined) return false;
  sink(text.slice(processIdStart, processIdEnd), { type: 'output', seq, stream, chunk });
  return true;
}

/** The position of the first character at or after `at` that is not JSON whitespace. */
function skipSpace(text: string, at: number): number {
  let code = text.charCodeAt(at);
  while (code === SPACE || code === LF || code === CR || code === TAB) code = text.charCodeAt((at += 1));
  return at;
}

/** The bit of an envelope key: method, params, or 0 for any other. */
const envelopeKey = (name: string): number => (name === 'method' ? KEY_METHOD : name === 'params' ? KEY_PARAMS : 0);

/** The bit of a params key: one of the four fields, or 0 for any other. */
const paramsKey = (name: string): number =>
  name === 'processId' ? KEY_PROCESS_ID : name === 'seq' ? KEY_SEQ : name === 'stream' ? KEY_STREAM : name === 'chunk' ? KEY_CHUNK : 0;

/**
 * The position of the closing quote of the string opening at `at`, when it holds no escape and no control
 * character (what JSON.parse makes of it is then its text); -1 otherwise.
 */
function stringEnd(text: string, at: number): number {
  if (text.charCodeAt(at) !== QUOTE) return -1;
  const length = text.length;
  for (let i = at + 1; i < length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) return i;
    if (code === BACKSLASH || code < FIRST_PRINTABLE) return -1;
  }
  return -1;
}

/** The position after the digits from `at`. */
function digitsEnd(text: string, at: number): number {
  let code = text.charCodeAt(at);
  while (code >= ZERO && code <= NINE) code = text.charCodeAt((at += 1));
  return at;
}

/**
 * The value of the digits from `start` to `end` when they are the whole JSON number and it is at most
 * 2^53 − 1 (then exact as accumulated); -1 when there are none, a leading zero (JSON.parse refuses `01`),
 * a fraction or an exponent follows, or there are too many.
 */
function seqOf(text: string, start: number, end: number): number {
  const digits = end - start;
  if (digits === 0 || digits > MAX_SEQ_DIGITS || (digits > 1 && text.charCodeAt(start) === ZERO)) return -1;
  const after = text.charCodeAt(end);
  if (after === PERIOD || after === LOWER_E || after === UPPER_E) return -1;
  let value = 0;
  for (let i = start; i < end; i += 1) value = value * 10 + (text.charCodeAt(i) - ZERO);
  // Past 2^53 the sum may have rounded, but never down to 2^53 − 1 or below.
  return value > Number.MAX_SAFE_INTEGER ? -1 : value;
}
