import { Buffer, isAscii } from 'node:buffer';

/** What a {@link LineSplitter} does with bytes: decode a line, and join the pieces of one that spans chunks. */
export interface LineCodec {
  /** The text of `bytes[start, end)`; `ascii`: every one of those bytes is below 0x80. */
  readonly decode: (bytes: Buffer, start: number, end: number, ascii: boolean) => string;
  /** One buffer holding `parts` in order (`length`: their total byte length). */
  readonly join: (parts: readonly Buffer[], length: number) => Buffer;
}

/**
 * The codec every port uses: ASCII bytes decode as latin1 (the same characters, without UTF-8's
 * validation), anything else as UTF-8 (invalid sequences become U+FFFD); parts join with one copy.
 */
export const defaultLineCodec: LineCodec = {
  decode: (bytes, start, end, ascii) => bytes.toString(ascii ? 'latin1' : 'utf8', start, end),
  join: (parts, length) => Buffer.concat(parts, length),
};

/**
 * Where a {@link LineSplitter} hands each line: its text without the newline (nor one `\r` before it),
 * and whether all its bytes were ASCII (then the text holds no character a multi-byte UTF-8 sequence made).
 */
export type LineHandler = (line: string, ascii: boolean) => void;

const NEWLINE = 0x0a;
const RETURN = 0x0d;

/**
 * Splits a byte stream into newline-delimited lines (NDJSON: every line ends with `\n`), working on the
 * bytes: each line is decoded once, straight from the chunk it arrived in. A line that spans chunks is
 * kept as a list of slices of those chunks and joined once, when its newline arrives; a line that does
 * not span chunks is never copied. One `\r` before the newline is dropped, and blank lines (empty, or
 * whitespace only as `String.prototype.trim` sees it) are skipped. Bytes after the last newline wait for
 * the next chunk: a stream that ends without a newline leaves its last line undelivered (see
 * {@link pendingBytes}). The chunks pushed must not be written to afterwards (slices of them are kept).
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private partLength = 0;

  constructor(
    private readonly onLine: LineHandler,
    private readonly codec: LineCodec = defaultLineCodec,
  ) {}

  /** Bytes of a line begun but not yet ended by a newline. */
  get pendingBytes(): number {
    return this.partLength;
  }

  /** Takes one chunk: hands every line it completes to the handler, in order, and keeps the rest. */
  push(chunk: Buffer): void {
    let nl = chunk.indexOf(NEWLINE);
    if (nl === -1) return this.keep(chunk);
    // One native scan per chunk: in the usual all-ASCII chunk no line needs a scan of its own.
    const chunkAscii = isAscii(chunk);
    let start = 0;
    if (this.partLength !== 0) {
      this.spanning(chunk, nl);
      start = nl + 1;
      nl = chunk.indexOf(NEWLINE, start);
    }
    for (; nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      const end = nl > start && chunk[nl - 1] === RETURN ? nl - 1 : nl;
      if (end > start) this.line(chunk, start, end, chunkAscii || isAscii(chunk.subarray(start, end)));
      start = nl + 1;
    }
    if (start < chunk.length) this.keep(start === 0 ? chunk : chunk.subarray(start));
  }

  /** Drops a line begun but not ended (the stream ended, or its reader is done). */
  reset(): void {
    this.parts = [];
    this.partLength = 0;
  }

  /** The line that began in earlier chunks ends at `chunk[nl]`. */
  private spanning(chunk: Buffer, nl: number): void {
    if (nl > 0) this.keep(chunk.subarray(0, nl));
    const parts = this.parts;
    const whole = parts.length === 1 ? (parts[0] ?? chunk) : this.codec.join(parts, this.partLength);
    this.reset();
    const end = whole.length > 0 && whole[whole.length - 1] === RETURN ? whole.length - 1 : whole.length;
    if (end > 0) this.line(whole, 0, end, isAscii(whole.subarray(0, end)));
  }

  private keep(bytes: Buffer): void {
    this.parts.push(bytes);
    this.partLength += bytes.length;
  }

  /** `bytes[start, end)` is a line (not empty): skipped when blank, else decoded once and handed over. */
  private line(bytes: Buffer, start: number, end: number, ascii: boolean): void {
    const text = this.codec.decode(bytes, start, end, ascii);
    if (mayBeBlank(bytes[start] ?? 0) && text.trim() === '') return;
    this.onLine(text, ascii);
  }
}

/**
 * Whether a line starting with `byte` can be whitespace only: ASCII whitespace (tab, newline, vertical
 * tab, form feed, carriage return, space) or the first byte of a multi-byte character (which may be
 * Unicode whitespace, U+00A0 or U+FEFF say). A JSON message starts with `{`, so the trim is rare.
 */
const mayBeBlank = (byte: number): boolean => byte === 0x20 || (byte >= 0x09 && byte <= 0x0d) || byte >= 0x80;
