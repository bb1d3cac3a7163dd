import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either';
import { NOT_JSON, tryParseJson } from '../../src/wire/decode';
import { decodeNotificationParams } from '../../src/wire/methods';
import { outputEventOf } from '../../src/wire/output-event';
import { SCAN_MAX_CHARS, scanOutputFrame } from '../../src/wire/output-scanner';
import type { OutputEvent } from '../../src/wire/process-event';
import { executorLayoutFrameText, outputFrameText, plainOutputFrameText } from './output-scanner-frames';

interface Read {
  readonly processId: string;
  readonly event: OutputEvent;
}

/** What the scanner hands its sink for `text`, or `undefined` when it declines. */
function scan(text: string, ascii: boolean): Read | undefined {
  const reads: Read[] = [];
  const accepted = scanOutputFrame(text, ascii, (processId, event) => reads.push({ processId, event }));
  expect(reads).toHaveLength(accepted ? 1 : 0);
  return reads[0];
}

/**
 * What the ordinary read path makes of `text`: JSON.parse, `readFrame`'s notification test, then the
 * router's `outputEventOf` — the `process/output` event it routes, or `undefined` for anything else
 * (not JSON, another kind of message or method, or params that fail the decoder).
 */
function ordinary(text: string, ascii: boolean): Read | undefined {
  const value = tryParseJson(text);
  if (value === NOT_JSON || typeof value !== 'object' || value === null) return undefined;
  const { id, method, result, error, params } = value as { readonly [key: string]: unknown };
  if (error !== undefined || id !== undefined || result !== undefined || method !== 'process/output') return undefined;
  const event = outputEventOf(params, ascii);
  if (event === undefined) return undefined;
  // The codec, which the hand-written decoder stands in for, agrees.
  const decoded = decodeNotificationParams('process/output', params);
  if (E.isLeft(decoded)) throw new Error(`outputEventOf accepted what the codec refuses: ${text}`);
  return { processId: decoded.right.processId, event };
}

const isAscii = (text: string): boolean => Buffer.byteLength(text, 'utf8') === text.length;

const frame = (params: string, method = '"process/output"'): string => `{"method":${method},"params":${params}}`;

describe('scanOutputFrame', () => {
  it('reads an executor frame: processId, seq, stream and the chunk bytes', () => {
    expect(scan(frame('{"processId":"p1","seq":1,"stream":"stdout","chunk":"b3V0MQo="}'), true)).toEqual({
      processId: 'p1',
      event: { type: 'output', seq: 1, stream: 'stdout', chunk: Buffer.from('out1\n') },
    });
  });

  it("reads the synthetic peer's frames: a seq padded with spaces", () => {
    const text = frame('{"processId":"x","seq":          42,"stream":"pty","chunk":""}');
    expect(scan(text, true)).toEqual({ processId: 'x', event: { type: 'output', seq: 42, stream: 'pty', chunk: Buffer.alloc(0) } });
  });

  it('reads members in any order, whitespace anywhere, a non-ASCII processId, the largest exact seq', () => {
    const text = ' \r\n{ "params" :\t{ "chunk":"QUJD" , "stream":"stderr","seq": 9007199254740991 ,"processId":"prozeß-✓" } , "method" : "process/output" }\n';
    expect(scan(text, false)).toEqual({ processId: 'prozeß-✓', event: { type: 'output', seq: 9007199254740991, stream: 'stderr', chunk: Buffer.from('ABC') } });
  });

  it.each<[string, string]>([
    ['another method', frame('{"processId":"p","seq":1,"stream":"stdout","chunk":""}', '"process/exited"')],
    ['an escaped method', frame('{"processId":"p","seq":1,"stream":"stdout","chunk":""}', '"process\\/output"')],
    ['a jsonrpc member', '{"jsonrpc":"2.0","method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":""}}'],
    ['an id', '{"id":1,"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":""}}'],
    ['an unknown params member', frame('{"processId":"p","seq":1,"stream":"stdout","chunk":"","extra":1}')],
    ['a repeated member', frame('{"processId":"p","seq":1,"seq":2,"stream":"stdout","chunk":""}')],
    ['an escape in the processId', frame('{"processId":"\\u0070","seq":1,"stream":"stdout","chunk":""}')],
    ['an escape in the chunk', frame('{"processId":"p","seq":1,"stream":"stdout","chunk":"QUJD\\/A=="}')],
    ['a seq with a fraction', frame('{"processId":"p","seq":1.0,"stream":"stdout","chunk":""}')],
    ['a seq with an exponent', frame('{"processId":"p","seq":1e2,"stream":"stdout","chunk":""}')],
    ['a seq of -0', frame('{"processId":"p","seq":-0,"stream":"stdout","chunk":""}')],
    ['a seq past 2^53 - 1', frame('{"processId":"p","seq":9007199254740993,"stream":"stdout","chunk":""}')],
  ])('declines a frame the ordinary path reads: %s', (_what, text) => {
    expect(scan(text, true)).toBeUndefined();
    // Declining costs only speed: the ordinary path still reads these (or names what is wrong).
    expect(() => JSON.parse(text) as unknown).not.toThrow();
  });

  it.each<[string, string]>([
    ['a chunk that is not canonical base64', frame('{"processId":"p","seq":1,"stream":"stdout","chunk":"QR=="}')],
    ['a leading zero', frame('{"processId":"p","seq":01,"stream":"stdout","chunk":""}')],
    ['a control character in the processId', frame('{"processId":"a\u0001","seq":1,"stream":"stdout","chunk":""}')],
    ['text after the object', `${frame('{"processId":"p","seq":1,"stream":"stdout","chunk":""}')}x`],
    ['a missing member', frame('{"processId":"p","seq":1,"chunk":""}')],
    ['a non-breaking space as whitespace', frame('{"processId":"p","seq":\u00a01,"stream":"stdout","chunk":""}')],
  ])('refuses what the ordinary path refuses: %s', (_what, text) => {
    expect(ordinary(text, true)).toBeUndefined();
    expect(scan(text, true)).toBeUndefined();
  });

  it(`declines frames longer than ${SCAN_MAX_CHARS} characters, which the ordinary path reads`, () => {
    const empty = frame('{"processId":"","seq":1,"stream":"stdout","chunk":""}').length;
    const at = (length: number): string => frame(`{"processId":"${'p'.repeat(length - empty)}","seq":1,"stream":"stdout","chunk":""}`);
    expect(at(SCAN_MAX_CHARS)).toHaveLength(SCAN_MAX_CHARS);
    expect(scan(at(SCAN_MAX_CHARS), true)?.processId).toHaveLength(SCAN_MAX_CHARS - empty);
    expect(scan(at(SCAN_MAX_CHARS + 1), true)).toBeUndefined();
    expect(ordinary(at(SCAN_MAX_CHARS + 1), true)).toBeDefined();
  });

  it('equals the ordinary read path or declines, on frames written every way JSON allows (property)', () => {
    let ordinaryAccepted = 0;
    let scanned = 0;
    fc.assert(
      fc.property(outputFrameText(), fc.boolean(), (text, claimAscii) => {
        // The port says ASCII only when it is so; otherwise it may not know.
        const ascii = claimAscii && isAscii(text);
        const expected = ordinary(text, ascii);
        const got = scan(text, ascii);
        if (expected !== undefined) ordinaryAccepted += 1;
        if (got === undefined) return;
        scanned += 1;
        // Never accepts what the ordinary path refuses; when it accepts, it reads the same.
        expect(got).toEqual(expected);
        expect(Object.is(got.event.seq, expected?.event.seq)).toBe(true);
      }),
      { numRuns: 4000, seed: 32 },
    );
    // Both paths must accept often, or the property proves little.
    // (The scanner declines most frames written with escapes, which are frequent here: the next property covers the rest.)
    expect(ordinaryAccepted).toBeGreaterThan(900);
    expect(scanned).toBeGreaterThan(250);
  });

  it('reads every frame up to the length limit written without escapes or other members, in any order and any whitespace (property)', () => {
    fc.assert(
      fc.property(plainOutputFrameText(), (text) => {
        const expected = ordinary(text, isAscii(text));
        expect(expected).toBeDefined();
        expect(scan(text, isAscii(text))).toEqual(text.length > SCAN_MAX_CHARS ? undefined : expected);
      }),
      { numRuns: 1000, seed: 7 },
    );
  });

  it("equals the ordinary read path or declines, on runs of frames in the executor's layout (property)", () => {
    let ordinaryAccepted = 0;
    let scanned = 0;
    fc.assert(
      fc.property(fc.array(executorLayoutFrameText(), { minLength: 1, maxLength: 8 }), (texts) => {
        // A run: the scanner keeps the last processId it read, so each frame follows others.
        for (const text of texts) {
          const ascii = isAscii(text);
          const expected = ordinary(text, ascii);
          const got = scan(text, ascii);
          if (expected !== undefined) ordinaryAccepted += 1;
          if (got === undefined) continue;
          scanned += 1;
          expect(got).toEqual(expected);
        }
      }),
      { numRuns: 1000, seed: 11 },
    );
    expect(ordinaryAccepted).toBeGreaterThan(1000);
    expect(scanned).toBeGreaterThan(700);
  });
});
