/**
 * Reads the binary event stream (`application/vnd.exec-rx.events`, the layout in `wire/binary-events.ts`):
 * {@link BinaryFrameDecoder} cuts the body's bytes into frames across chunk boundaries, checking every
 * header as soon as it is whole; {@link readBinaryEvents} feeds it from a `fetch` answer with the hooks
 * `readSse` has. Browser-safe: `DataView` and `TextDecoder`, no Buffer.
 *
 * A frame that cannot be one (an unknown kind, a length past the cap, a seq past 2^53 − 1, text that is
 * not UTF-8 …) is an {@link EventFrameError}: a length no longer says where the next frame starts, so the
 * stream cannot go on. The event stream treats it as a dropped connection and resumes by seq; what came
 * before the bad frame was delivered, and a frame cut short by the end of the body is dropped whole.
 */
import { FLAG_TIME, FRAME_HEADER_BYTES, FrameKind, MAX_FRAME_PAYLOAD_BYTES, outputPrefixBytes, streamOfKind } from '../wire/binary-events';
import type { SseMessage, SseReadHooks } from './sse-reader';
import { readBody } from './sse-reader';

/** The bytes of the binary event stream are not frames: the stream ends, and is resumed by seq. */
export class EventFrameError extends Error {
  override readonly name = 'EventFrameError';

  constructor(
    message: string,
    /** Where in the body the bad frame starts (bytes from the start of this answer). */
    readonly offset: number,
  ) {
    super(`the binary event stream is corrupt at byte ${offset}: ${message}`);
  }
}

/** An output frame, decoded. `chunk` may share memory with the body's bytes: it is never written to. */
export interface OutputFrame {
  readonly seq: number;
  readonly stream: 'stdout' | 'stderr' | 'pty';
  readonly time: number | undefined;
  readonly chunk: Uint8Array;
}

/** One frame: an output, an event (its name and JSON data, as SSE has them), or nothing to deliver (ping, notice). */
export type BinaryFrame =
  | { readonly kind: 'output'; readonly output: OutputFrame }
  | { readonly kind: 'event'; readonly message: SseMessage }
  | { readonly kind: 'ping' }
  | { readonly kind: 'notice'; readonly text: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });
const MAX_SEQ_HIGH = 0x1f_ffff;

/** Cuts bytes into frames, whatever the chunks' boundaries. */
export class BinaryFrameDecoder {
  private readonly chunks: Uint8Array[] = [];
  /** Where the unread bytes start in `chunks[0]`. */
  private at = 0;
  private available = 0;
  /** Bytes of the body before the unread ones (for the error's offset). */
  private consumed = 0;
  private readonly header = new Uint8Array(FRAME_HEADER_BYTES);
  private readonly view = new DataView(this.header.buffer);

  /** Bytes received and not yet cut into a frame (a partial frame at the end of a body is what it leaves). */
  get pending(): number {
    return this.available;
  }

  /** Adds bytes of the body (kept, not copied, until their frames are cut). */
  push(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    this.chunks.push(bytes);
    this.available += bytes.byteLength;
  }

  /** The next whole frame, `undefined` until its bytes came. Throws {@link EventFrameError} for bytes that cannot be a frame. */
  next(): BinaryFrame | undefined {
    if (this.available < FRAME_HEADER_BYTES) return undefined;
    this.copy(this.header, FRAME_HEADER_BYTES);
    const kind = this.header[0] ?? 0;
    const flags = this.header[1] ?? 0;
    const length = this.view.getUint32(4);
    this.check(kind, flags, length);
    if (this.available < FRAME_HEADER_BYTES + length) return undefined;
    const offset = this.consumed;
    this.skip(FRAME_HEADER_BYTES);
    const payload = this.take(length);
    return decodeFrame(kind, flags, payload, offset);
  }

  /** Refuses a header that no frame has. */
  private check(kind: number, flags: number, length: number): void {
    const bad = (why: string): never => {
      throw new EventFrameError(why, this.consumed);
    };
    const output = streamOfKind(kind) !== undefined;
    if (!output && kind !== FrameKind.event && kind !== FrameKind.ping && kind !== FrameKind.notice) bad(`unknown frame kind ${kind}`);
    if (this.header[2] !== 0 || this.header[3] !== 0) bad('reserved header bytes are not 0');
    if ((output && (flags & ~FLAG_TIME) !== 0) || (!output && flags !== 0)) bad(`flags ${flags} on a frame of kind ${kind}`);
    if (length > MAX_FRAME_PAYLOAD_BYTES) bad(`a frame of ${length} bytes is past the ${MAX_FRAME_PAYLOAD_BYTES}-byte cap`);
    if (output && length < outputPrefixBytes((flags & FLAG_TIME) !== 0)) bad(`an output frame of ${length} bytes has no room for its seq`);
    if (kind === FrameKind.ping && length !== 0) bad('a ping with a payload');
    if (kind === FrameKind.event && length < 2) bad('an event frame without a name');
  }

  /** Copies the first `n` unread bytes into `into` without consuming them. */
  private copy(into: Uint8Array, n: number): void {
    let filled = 0;
    for (let i = 0, from = this.at; filled < n; i += 1, from = 0) {
      const chunk = this.chunks[i];
      if (chunk === undefined) return;
      const part = chunk.subarray(from, Math.min(chunk.byteLength, from + n - filled));
      into.set(part, filled);
      filled += part.byteLength;
    }
  }

  private skip(n: number): void {
    this.at += n;
    this.available -= n;
    this.consumed += n;
    for (let first = this.chunks[0]; first !== undefined && this.at >= first.byteLength; first = this.chunks[0]) {
      this.at -= first.byteLength;
      this.chunks.shift();
    }
  }

  /** The next `n` bytes: a view of the chunk when they lie in one, else a copy. */
  private take(n: number): Uint8Array {
    const first = this.chunks[0];
    let out: Uint8Array;
    if (first !== undefined && this.at + n <= first.byteLength) out = first.subarray(this.at, this.at + n);
    else {
      out = new Uint8Array(n);
      this.copy(out, n);
    }
    this.skip(n);
    return out;
  }
}

/** A whole frame's payload, decoded by kind (the header was checked). */
function decodeFrame(kind: number, flags: number, payload: Uint8Array, offset: number): BinaryFrame {
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const stream = streamOfKind(kind);
  if (stream !== undefined) {
    const high = view.getUint32(0);
    if (high > MAX_SEQ_HIGH) throw new EventFrameError('a seq past 2^53 - 1', offset);
    const seq = high * 0x1_0000_0000 + view.getUint32(4);
    const timed = (flags & FLAG_TIME) !== 0;
    const time = timed ? view.getFloat64(8) : undefined;
    if (time !== undefined && !(Number.isSafeInteger(time) && time >= 0)) throw new EventFrameError(`a time that is not a whole number of ms (${time})`, offset);
    return { kind: 'output', output: { seq, stream, time, chunk: payload.subarray(outputPrefixBytes(timed)) } };
  }
  if (kind === FrameKind.ping) return { kind: 'ping' };
  const text = (bytes: Uint8Array): string => {
    try {
      return utf8.decode(bytes);
    } catch {
      throw new EventFrameError('text that is not UTF-8', offset);
    }
  };
  if (kind === FrameKind.notice) return { kind: 'notice', text: text(payload) };
  const nameBytes = payload[0] ?? 0;
  if (nameBytes === 0 || 1 + nameBytes > payload.byteLength) throw new EventFrameError(`an event name of ${nameBytes} bytes in a ${payload.byteLength}-byte frame`, offset);
  const name = text(payload.subarray(1, 1 + nameBytes));
  if (!/^[a-z][a-zA-Z]*$/.test(name)) throw new EventFrameError(`an event name that is not one (${JSON.stringify(name)})`, offset);
  return { kind: 'event', message: { id: undefined, event: name, data: text(payload.subarray(1 + nameBytes)) } };
}

/** Where {@link readBinaryEvents} hands what it reads. */
export interface BinaryEventHandlers {
  /** A non-output event, as SSE would have carried it (name and JSON data). */
  readonly message: (message: SseMessage) => void;
  /** An output frame. */
  readonly output: (output: OutputFrame) => void;
}

/**
 * Delivers each whole frame of `response` as `readSse` delivers events: `handlers` may throw to stop
 * reading (the promise rejects with that error); resolves when the body ends (a partial frame at its end
 * is dropped: the connection was cut there) or `hooks.stop()` holds after a frame; rejects when the
 * connection fails, the request aborts, or with {@link EventFrameError}. Waits for `hooks.room()` before
 * each read of the body. The body is cancelled in every case.
 */
export async function readBinaryEvents(response: Response, handlers: BinaryEventHandlers, hooks: SseReadHooks = {}): Promise<void> {
  const { stop = () => false } = hooks;
  const decoder = new BinaryFrameDecoder();
  const feed = (bytes: Uint8Array): boolean => {
    decoder.push(bytes);
    for (let frame = decoder.next(); frame !== undefined; frame = decoder.next()) {
      if (frame.kind === 'output') handlers.output(frame.output);
      else if (frame.kind === 'event') handlers.message(frame.message);
      else continue;
      if (stop()) return true;
    }
    return false;
  };
  await readBody(response, feed, hooks);
}
