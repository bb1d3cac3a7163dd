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
 * It declines the rest: other members (`jsonrpc`, `id`, unknown params), duplicated members, escapes in
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

/** The read position in the frame being scanned, and what the scan found so far (one scan at a time: it never calls out before it ends). */
let at = 0;
let processIdStart = 0;
let processIdEnd = 0;
let chunkStart = 0;
let chunkEnd = 0;
let seq = 0;
let stream: OutputStream = 'stdout';

/**
 * Reads `text` as a `process/output` notification. When it is one the scanner accepts (see the module
 * comment), decodes the chunk, calls `sink` once with the processId and the event, and returns `true`;
 * otherwise returns `false` having done nothing: no call, no arena space taken. `ascii`: `text` holds
 * ASCII only (see `decodeCanonical`). Never throws (unless `sink` does).
 */
export function scanOutputFrame(text: string, ascii: boolean, sink: OutputSink): boolean {
  at = 0;
  if (skipSpace(text) !== OPEN_BRACE) return false;
  at += 1;
  let seen = 0;
  for (;;) {
    const key = readKey(text, false);
    if (key === 0 || (seen & key) !== 0) return false;
    seen |= key;
    if (key === KEY_METHOD) {
      if (!text.startsWith(METHOD_VALUE, at)) return false;
      at += METHOD_VALUE.length;
    } else if (!readParams(text)) return false;
    const next = skipSpace(text);
    at += 1;
    if (next === CLOSE_BRACE) break;
    if (next !== COMMA) return false;
  }
  if (seen !== (KEY_METHOD | KEY_PARAMS)) return false;
  skipSpace(text);
  if (at !== text.length) return false;
  const chunk = decodeCanonical(text.slice(chunkStart, chunkEnd), ascii);
  if (chunk === undefined) return false;
  sink(text.slice(processIdStart, processIdEnd), { type: 'output', seq, stream, chunk });
  return true;
}

/** Moves past JSON whitespace; returns the code unit there (NaN at the end). */
function skipSpace(text: string): number {
  let code = text.charCodeAt(at);
  while (code === SPACE || code === LF || code === CR || code === TAB) code = text.charCodeAt((at += 1));
  return code;
}

/**
 * Reads `"key"` and the colon after it, leaving the position at the value. Returns the key's bit (top
 * level: method, params; in params: the four fields), or 0 for any other key or text.
 */
function readKey(text: string, inParams: boolean): number {
  if (skipSpace(text) !== QUOTE) return 0;
  const start = at + 1;
  const end = text.indexOf('"', start);
  if (end === -1) return 0;
  const key = inParams ? paramsKey(text, start, end - start) : envelopeKey(text, start, end - start);
  at = end + 1;
  if (key === 0 || skipSpace(text) !== COLON) return 0;
  at += 1;
  skipSpace(text);
  return key;
}

const envelopeKey = (text: string, start: number, length: number): number => {
  if (length !== 6) return 0;
  return text.startsWith('method', start) ? KEY_METHOD : text.startsWith('params', start) ? KEY_PARAMS : 0;
};

const paramsKey = (text: string, start: number, length: number): number => {
  if (length === 9) return text.startsWith('processId', start) ? KEY_PROCESS_ID : 0;
  if (length === 3) return text.startsWith('seq', start) ? KEY_SEQ : 0;
  if (length === 6) return text.startsWith('stream', start) ? KEY_STREAM : 0;
  if (length === 5) return text.startsWith('chunk', start) ? KEY_CHUNK : 0;
  return 0;
};

/** Reads the params object, position at its `{`; records each field's value. */
function readParams(text: string): boolean {
  if (text.charCodeAt(at) !== OPEN_BRACE) return false;
  at += 1;
  let seen = 0;
  for (;;) {
    const key = readKey(text, true);
    if (key === 0 || (seen & key) !== 0) return false;
    seen |= key;
    if (!readField(text, key)) return false;
    const next = skipSpace(text);
    at += 1;
    if (next === CLOSE_BRACE) return seen === ALL_PARAMS;
    if (next !== COMMA) return false;
  }
}

function readField(text: string, key: number): boolean {
  switch (key) {
    case KEY_PROCESS_ID:
      return readProcessId(text);
    case KEY_SEQ:
      return readSeq(text);
    case KEY_STREAM:
      return readStream(text);
    default:
      return readChunkSpan(text);
  }
}

/** A string without escapes or control characters (what JSON.parse would return is then the text itself). */
function readProcessId(text: string): boolean {
  if (text.charCodeAt(at) !== QUOTE) return false;
  const start = at + 1;
  const length = text.length;
  for (let i = start; i < length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      processIdStart = start;
      processIdEnd = i;
      at = i + 1;
      return true;
    }
    if (code === BACKSLASH || code < FIRST_PRINTABLE) return false;
  }
  return false;
}

/** A JSON integer ≥ 0 with no fraction or exponent, at most 2^53 − 1: exact as accumulated. */
function readSeq(text: string): boolean {
  const start = at;
  let code = text.charCodeAt(at);
  let value = 0;
  while (code >= ZERO && code <= NINE) {
    value = value * 10 + (code - ZERO);
    code = text.charCodeAt((at += 1));
  }
  const digits = at - start;
  // No digit, a leading zero (JSON.parse refuses `01`), a fraction, an exponent, or too many digits.
  if (digits === 0 || digits > MAX_SEQ_DIGITS || (digits > 1 && text.charCodeAt(start) === ZERO)) return false;
  if (code === 46 /* . */ || code === 101 /* e */ || code === 69 /* E */) return false;
  // Past 2^53 the sum may have rounded, but never down to 2^53 − 1 or below.
  if (value > Number.MAX_SAFE_INTEGER) return false;
  seq = value;
  return true;
}

function readStream(text: string): boolean {
  if (text.startsWith('"stdout"', at)) stream = 'stdout';
  else if (text.startsWith('"stderr"', at)) stream = 'stderr';
  else if (text.startsWith('"pty"', at)) {
    stream = 'pty';
    at += 5;
    return true;
  } else return false;
  at += 8;
  return true;
}

/** The chunk's span up to the next quote; whether it is canonical base64 (so holds no escape) is checked once the frame is whole. */
function readChunkSpan(text: string): boolean {
  if (text.charCodeAt(at) !== QUOTE) return false;
  const end = text.indexOf('"', at + 1);
  if (end === -1) return false;
  chunkStart = at + 1;
  chunkEnd = end;
  at = end + 1;
  return true;
}
