/**
 * The stdio port's line splitter: lines come out exact however the bytes are cut into chunks (inside a
 * multi-byte character too), `\r\n` and blank lines as the executor's own reader treats them, and the
 * work per line is bounded: each line decoded once, and a join only for a line that spans chunks.
 */
import { Buffer } from 'node:buffer';
import { defaultLineCodec, LineSplitter } from '../../src/transport/line-splitter';
import type { LineCodec } from '../../src/transport/line-splitter';

interface Heard {
  readonly line: string;
  readonly ascii: boolean;
}

/** A splitter whose codec counts its calls (and what each decode covered). */
function counted(): { splitter: LineSplitter; heard: Heard[]; decoded: string[]; joins: number[] } {
  const heard: Heard[] = [];
  const decoded: string[] = [];
  const joins: number[] = [];
  const codec: LineCodec = {
    decode: (bytes, start, end, ascii) => {
      const text = defaultLineCodec.decode(bytes, start, end, ascii);
      decoded.push(text);
      return text;
    },
    join: (parts, length) => {
      joins.push(parts.length);
      return defaultLineCodec.join(parts, length);
    },
  };
  const splitter = new LineSplitter((line, ascii) => heard.push({ line, ascii }), codec);
  return { splitter, heard, decoded, joins };
}

const MESSAGES = [
  '{"method":"process/output","params":{"chunk":"aGVsbG8="}}',
  '{"text":"café, 日本語, 😀"}',
  '{"id":1,"result":{}}',
];
/** The executor's lines with what a port may meet besides: CRLF, blank and whitespace-only lines. */
const STREAM = `${MESSAGES[0] ?? ''}\r\n\n\r\n  \t\n\u00a0\n${MESSAGES[1] ?? ''}\n\ufeff\r\n${MESSAGES[2] ?? ''}\n`;
const EXPECTED: Heard[] = [
  { line: MESSAGES[0] ?? '', ascii: true },
  { line: MESSAGES[1] ?? '', ascii: false },
  { line: MESSAGES[2] ?? '', ascii: true },
];

describe('LineSplitter', () => {
  it('gives the same lines whatever byte the stream is cut at, inside a multi-byte character too', () => {
    const bytes = Buffer.from(STREAM, 'utf8');
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      const { splitter, heard } = counted();
      splitter.push(bytes.subarray(0, cut));
      splitter.push(bytes.subarray(cut));
      expect({ cut, heard }).toEqual({ cut, heard: EXPECTED });
      expect(splitter.pendingBytes).toBe(0);
    }
  });

  it('gives the same lines from one byte at a time and from three cuts at every pair of offsets', () => {
    const bytes = Buffer.from(STREAM, 'utf8');
    const single = counted();
    for (let i = 0; i < bytes.length; i += 1) single.splitter.push(bytes.subarray(i, i + 1));
    expect(single.heard).toEqual(EXPECTED);
    for (let a = 0; a <= bytes.length; a += 7) {
      for (let b = a; b <= bytes.length; b += 3) {
        const { splitter, heard } = counted();
        for (const part of [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]) splitter.push(part);
        expect({ a, b, heard }).toEqual({ a, b, heard: EXPECTED });
      }
    }
  });

  it('drops one \\r before the newline only, and skips blank lines as String.prototype.trim sees them', () => {
    const { splitter, heard } = counted();
    splitter.push(Buffer.from('a\r\r\n\r\n \r\n\u2028\n\u3000\r\n"\u00a0"\n \t{"x":1}\n\x1f\n', 'utf8'));
    expect(heard.map((h) => h.line)).toEqual(['a\r', '"\u00a0"', ' \t{"x":1}', '\x1f']);
  });

  it('says a line is ASCII from its own bytes, whatever else its chunk holds', () => {
    const { splitter, heard } = counted();
    splitter.push(Buffer.from('{"a":"plain"}\n{"b":"é"}\n{"c":"plain"}\n', 'utf8'));
    expect(heard.map((h) => h.ascii)).toEqual([true, false, true]);
  });

  it('decodes invalid UTF-8 as U+FFFD and does not call it ASCII', () => {
    const { splitter, heard } = counted();
    splitter.push(Buffer.from([0x22, 0xff, 0x22, 0x0a, 0x22, 0xe2, 0x82]));
    splitter.push(Buffer.from([0x22, 0x0a]));
    expect(heard).toEqual([
      { line: '"\ufffd"', ascii: false },
      { line: '"\ufffd"', ascii: false },
    ]);
  });

  it('decodes each line once and never joins when no line spans chunks', () => {
    const { splitter, heard, decoded, joins } = counted();
    const lines = Array.from({ length: 50 }, (_, i) => `{"seq":${i},"chunk":"${'A'.repeat(i * 37)}"}`);
    for (let i = 0; i < lines.length; i += 5) splitter.push(Buffer.from(`${lines.slice(i, i + 5).join('\n')}\n`));
    expect(heard.map((h) => h.line)).toEqual(lines);
    expect(decoded).toEqual(lines);
    expect(joins).toEqual([]);
  });

  it('takes a line and its newline written apart (as the executor writes them) without a join', () => {
    const { splitter, heard, decoded, joins } = counted();
    for (const message of MESSAGES) {
      splitter.push(Buffer.from(message, 'utf8'));
      splitter.push(Buffer.from('\n'));
    }
    expect(heard.map((h) => h.line)).toEqual(MESSAGES);
    expect(decoded).toEqual(MESSAGES);
    expect(joins).toEqual([]);
  });

  it('joins a spanning line once, with every piece, and at most one join per chunk', () => {
    const { splitter, heard, decoded, joins } = counted();
    splitter.push(Buffer.from('{"a":1}\n{"b":'));
    splitter.push(Buffer.from('"xyz'));
    splitter.push(Buffer.from('w"}\n{"c":3}\n{"d":'));
    splitter.push(Buffer.from('4}\n'));
    expect(heard.map((h) => h.line)).toEqual(['{"a":1}', '{"b":"xyzw"}', '{"c":3}', '{"d":4}']);
    expect(decoded).toEqual(['{"a":1}', '{"b":"xyzw"}', '{"c":3}', '{"d":4}']);
    expect(joins).toEqual([3, 2]);
  });

  it('takes a very long line in many chunks with one join and one decode', () => {
    const { splitter, heard, decoded, joins } = counted();
    const line = `{"chunk":"${'QUJD'.repeat(300_000)}","tail":"ü"}`;
    const bytes = Buffer.from(`${line}\r\n`, 'utf8');
    const size = 64 * 1024;
    for (let at = 0; at < bytes.length; at += size) {
      splitter.push(bytes.subarray(at, at + size));
      if (at + size < bytes.length) expect(splitter.pendingBytes).toBe(at + size);
    }
    expect(heard).toEqual([{ line, ascii: false }]);
    expect(decoded).toHaveLength(1);
    expect(joins).toEqual([Math.ceil(bytes.length / size)]);
    expect(splitter.pendingBytes).toBe(0);
  });

  it('keeps a last line without its newline undelivered until the newline comes, and reset() drops it', () => {
    const { splitter, heard } = counted();
    splitter.push(Buffer.from('{"a":1}\n{"b":2}'));
    expect(heard.map((h) => h.line)).toEqual(['{"a":1}']);
    expect(splitter.pendingBytes).toBe(7);
    splitter.reset();
    expect(splitter.pendingBytes).toBe(0);
    splitter.push(Buffer.from('{"c":3}\n'));
    expect(heard.map((h) => h.line)).toEqual(['{"a":1}', '{"c":3}']);
  });
});
