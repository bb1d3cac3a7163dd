/**
 * The binary event stream's frames (`application/vnd.exec-rx.events`, the layout in
 * `wire/binary-events.ts`): an output is an 8-byte header and the seq (and `time`) before the chunk's
 * bytes, which are written as the log or the history holds them, not copied and not encoded; every other
 * event is its name and the same JSON data as its SSE frame.
 */
import type { ExecClientErrorCode } from '../../errors';
import type { ProcessEvent } from '../../exec/process-event';
import type { LogEvent } from '../../store/log-events';
import { BINARY_EVENTS_MEDIA_TYPE, FLAG_TIME, FRAME_HEADER_BYTES, FrameKind, MAX_FRAME_PAYLOAD_BYTES, outputKindOf, outputPrefixBytes } from '../../wire/binary-events';
import { RESTART_EVENT } from '../../wire/operator-api';
import type { EventFraming } from './event-framing';
import { SplitFrame } from './event-framing';
import { eventJson, failedJson, logEventJson, truncatedJson } from './event-frames';

/** Bytes of a slab the output heads are cut from (24 bytes each: one slab serves a few thousand). */
const SLAB_BYTES = 64 * 1024;
let slab = Buffer.allocUnsafeSlow(0);
let slabUsed = 0;

/** `size` bytes for one output head, cut from a shared slab (one allocation per few thousand frames). */
function headBuffer(size: number): Buffer {
  if (slabUsed + size > slab.byteLength) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + size);
  slabUsed += size;
  return out;
}

/** Writes a frame header at the start of `out`. */
function writeHeader(out: Buffer, kind: number, flags: number, payloadBytes: number): void {
  if (payloadBytes > MAX_FRAME_PAYLOAD_BYTES) throw new RangeError(`a binary frame of ${payloadBytes} bytes is past the ${MAX_FRAME_PAYLOAD_BYTES}-byte cap`);
  out[0] = kind;
  out[1] = flags;
  out[2] = 0;
  out[3] = 0;
  out.writeUInt32BE(payloadBytes, 4);
}

/** An output frame: its head (header, seq, `time` when given) and the chunk itself. */
export function outputFrame(seq: number, stream: 'stdout' | 'stderr' | 'pty', chunk: Uint8Array, time?: number): SplitFrame {
  const timed = time !== undefined;
  const prefix = outputPrefixBytes(timed);
  const head = headBuffer(FRAME_HEADER_BYTES + prefix);
  writeHeader(head, outputKindOf(stream), timed ? FLAG_TIME : 0, prefix + chunk.byteLength);
  head.writeUInt32BE(Math.floor(seq / 0x1_0000_0000), 8);
  head.writeUInt32BE(seq >>> 0, 12);
  if (timed) head.writeDoubleBE(time, 16);
  return new SplitFrame(head, chunk);
}

/** An event frame: the name's length, the name, its JSON data. */
export function jsonFrame(name: string, data: string): Buffer {
  const dataBytes = Buffer.byteLength(data, 'utf8');
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + 1 + name.length + dataBytes);
  writeHeader(out, FrameKind.event, 0, 1 + name.length + dataBytes);
  out[FRAME_HEADER_BYTES] = name.length;
  out.write(name, FRAME_HEADER_BYTES + 1, 'latin1');
  out.write(data, FRAME_HEADER_BYTES + 1 + name.length, 'utf8');
  return out;
}

/** A frame of `kind` with `text` as its payload (a notice), or none (a ping). */
function plainFrame(kind: number, text = ''): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(FRAME_HEADER_BYTES + bytes.byteLength);
  writeHeader(out, kind, 0, bytes.byteLength);
  bytes.copy(out, FRAME_HEADER_BYTES);
  return out;
}

const PING = plainFrame(FrameKind.ping);
const REVOKED = plainFrame(FrameKind.notice, 'the operator token of this stream was revoked');

/** The binary stream's framing (see the file comment). */
export const BINARY_FRAMING: EventFraming = {
  contentType: BINARY_EVENTS_MEDIA_TYPE,
  event: (event: ProcessEvent) => (event.type === 'output' ? outputFrame(event.seq, event.stream, event.chunk) : jsonFrame(...eventJson(event))),
  logEvent: (event: LogEvent) => (event.type === 'output' ? outputFrame(event.seq, event.stream, event.chunk, event.time) : jsonFrame(...logEventJson(event))),
  failed: (code: ExecClientErrorCode, message: string) => jsonFrame('failed', failedJson(code, message)),
  truncated: (nextSeq: number, droppedEvents: number) => jsonFrame('truncated', truncatedJson(nextSeq, droppedEvents)),
  ping: () => PING,
  comeBack: (retryMs: number) => jsonFrame(RESTART_EVENT, JSON.stringify({ retryMs })),
  revoked: () => REVOKED,
  overview: (data: unknown) => jsonFrame('overview', JSON.stringify(data)),
};
