/**
 * An incremental Server-Sent Events parser (the WHATWG "event stream interpretation", byte level): it
 * takes the body in pieces split anywhere (inside a line, between CR and LF, inside a UTF-8 sequence) and
 * calls back once per dispatched event and per comment line. Used by the raw SSE reader and by the
 * proxy that watches what the host sends, so both see the same frames in the same bytes.
 */

/** One dispatched event. `id` is the frame's own `id:` field (undefined when it had none). */
export interface SseFrame {
  readonly id: string | undefined;
  /** The event type (`message` when the frame named none). */
  readonly event: string;
  /** The data lines joined with `\n`. */
  readonly data: string;
}

/** What the parser calls. */
export interface SseParserListener {
  /** A frame ended (blank line) and carried data. */
  frame(frame: SseFrame): void;
  /** A comment line (`: ping` gives ` ping`). */
  comment?(text: string): void;
}

const LF = 0x0a;
const CR = 0x0d;

/** Parses an event stream body given in arbitrary pieces. */
export class SseParser {
  private line: Buffer[] = [];
  private lineBytes = 0;
  private skipLf = false;
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
  private hasData = false;
  private pending = 0;
  private atBoundary = true;
  /** The last `id:` seen (kept across frames without one, as the spec's "last event ID buffer"). */
  lastEventId: string | undefined;

  constructor(private readonly listener: SseParserListener) {}

  /**
   * Bytes received since the last frame or comment boundary (a blank line): 0 means the body so far
   * ends between frames, anything else that it stops inside one.
   */
  get partialBytes(): number {
    return this.pending;
  }

  /** Feeds the next piece of the body. */
  push(bytes: Uint8Array): void {
    let start = 0;
    for (let i = 0; i < bytes.length; i += 1) {
      const byte = bytes[i];
      if (this.skipLf) {
        this.skipLf = false;
        if (byte === LF) {
          // The LF of a CRLF: part of the line that just ended (nothing, when that line ended a frame).
          start = i + 1;
          if (!this.atBoundary) this.pending += 1;
          continue;
        }
      }
      if (byte !== LF && byte !== CR) continue;
      this.append(bytes.subarray(start, i));
      this.pending += 1;
      this.atBoundary = false;
      this.skipLf = byte === CR;
      start = i + 1;
      this.endLine();
    }
    this.append(bytes.subarray(start));
  }

  private append(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.line.push(Buffer.from(piece));
    this.lineBytes += piece.length;
    this.pending += piece.length;
  }

  private endLine(): void {
    const text = Buffer.concat(this.line, this.lineBytes).toString('utf8');
    this.line = [];
    this.lineBytes = 0;
    if (text === '') return this.dispatch();
    if (text.startsWith(':')) {
      this.listener.comment?.(text.slice(1));
      return;
    }
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'id' && !value.includes('\u0000')) {
      this.id = value;
      this.lastEventId = value;
    }
  }

  private dispatch(): void {
    const frame: SseFrame = { id: this.id, event: this.event === '' ? 'message' : this.event, data: this.data.join('\n') };
    const hasData = this.hasData;
    this.id = undefined;
    this.event = '';
    this.data = [];
    this.hasData = false;
    this.pending = 0;
    this.atBoundary = true;
    if (hasData) this.listener.frame(frame);
  }
}
