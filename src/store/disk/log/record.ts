/**
 * The record format of an output log segment: one record per sequenced event, a fixed 32-byte
 * little-endian header, then the payload.
 *
 * ```
 * offset size field
 *  0     4   crc       u32  zlib.crc32 of every byte after it: header bytes 4..31, then the payload
 *  4     2   magic     u16  0x5852 ("RX")
 *  6     1   kind      u8   1 output stdout, 2 output stderr, 3 output pty, 4 exited, 5 closed, 6 gap
 *  7     1   flags     u8   bit 0: sandboxDenied (exited only); other bits 0
 *  8     4   length    u32  payload bytes (0 for exited and closed)
 * 12     4   exitCode  i32  the exit code (exited only; 0 otherwise)
 * 16     8   seq       u64  the event's seq (low u32, then high u32), >= 1
 * 24     8   time      u64  the host's receipt time, ms since the epoch (low u32, then high u32)
 * 32     length payload     the output bytes (output); for a gap 16 bytes: its first seq u64, its bytes u64
 * ```
 *
 * A gap record (a range of seqs that will never come, see `GapRecord`) has as its seq the last missing one.
 *
 * A record is good when its header is plausible (magic, kind, flags, a length within
 * {@link MAX_RECORD_PAYLOAD_BYTES}, safe integers) and its CRC matches. A torn write leaves a record
 * whose bytes end early; a flipped bit fails the CRC. Either way the reader never serves it.
 */
import { crc32 } from 'node:zlib';
import type { SequencedEvent } from '../../../wire/process-event';
import type { GapRecord, StoredEvent } from './stored-event';

/** Bytes of a record's header. */
export const RECORD_HEADER_BYTES = 32;
/** The magic number at offset 4 ("RX"), the first check of a record (and of a resync candidate). */
export const RECORD_MAGIC = 0x5852;
/**
 * The largest payload a record holds: 64 MiB. An executor's frame is at most 16 MiB, so an output chunk
 * never comes near it; a length field above it is damage.
 */
export const MAX_RECORD_PAYLOAD_BYTES = 64 * 1024 * 1024;

const KIND_STDOUT = 1;
const KIND_STDERR = 2;
const KIND_PTY = 3;
const KIND_EXITED = 4;
const KIND_CLOSED = 5;
const KIND_GAP = 6;
/** Payload bytes of a gap record: its first seq and its bytes, two u64. */
const GAP_PAYLOAD_BYTES = 16;
const FLAG_SANDBOX_DENIED = 1;
const TWO_32 = 0x1_0000_0000;
/** The high word of the largest safe integer: a u64 field above it is damage. */
const MAX_HIGH_WORD = 0x1f_ffff;

/** Bytes the record of `event` takes in a segment: header plus payload. */
export const recordBytes = (event: SequencedEvent | GapRecord): number =>
  RECORD_HEADER_BYTES + (event.type === 'output' ? event.chunk.byteLength : event.type === 'gap' ? GAP_PAYLOAD_BYTES : 0);

function kindOf(event: SequencedEvent | GapRecord): number {
  switch (event.type) {
    case 'gap':
      return KIND_GAP;
    case 'output':
      return event.stream === 'stdout' ? KIND_STDOUT : event.stream === 'stderr' ? KIND_STDERR : KIND_PTY;
    case 'exited':
      return KIND_EXITED;
    case 'closed':
      return KIND_CLOSED;
  }
}

function writeU64(target: Buffer, offset: number, value: number): void {
  target.writeUInt32LE(value % TWO_32, offset);
  target.writeUInt32LE(Math.floor(value / TWO_32), offset + 4);
}

/**
 * Writes the record of `event`, received at `time`, into `target` at `offset` (which must have
 * {@link recordBytes} of room) and returns the offset after it. One copy of the payload, one CRC pass.
 */
export function writeRecord(target: Buffer, offset: number, event: SequencedEvent | GapRecord, time: number): number {
  const payload = event.type === 'output' ? event.chunk : undefined;
  const length = payload === undefined ? (event.type === 'gap' ? GAP_PAYLOAD_BYTES : 0) : payload.byteLength;
  target.writeUInt16LE(RECORD_MAGIC, offset + 4);
  target[offset + 6] = kindOf(event);
  target[offset + 7] = event.type === 'exited' && event.sandboxDenied ? FLAG_SANDBOX_DENIED : 0;
  target.writeUInt32LE(length, offset + 8);
  target.writeInt32LE(event.type === 'exited' ? event.exitCode | 0 : 0, offset + 12);
  writeU64(target, offset + 16, event.seq);
  writeU64(target, offset + 24, time);
  if (payload !== undefined) target.set(payload, offset + RECORD_HEADER_BYTES);
  if (event.type === 'gap') {
    writeU64(target, offset + RECORD_HEADER_BYTES, event.fromSeq);
    writeU64(target, offset + RECORD_HEADER_BYTES + 8, event.droppedBytes);
  }
  const end = offset + RECORD_HEADER_BYTES + length;
  target.writeUInt32LE(crc32(target.subarray(offset + 4, end)), offset);
  return end;
}

/** The record of `event` as a buffer of its own (specs, and what a one-off write needs). */
export function encodeRecord(event: SequencedEvent | GapRecord, time: number): Buffer {
  const buffer = Buffer.allocUnsafe(recordBytes(event));
  writeRecord(buffer, 0, event, time);
  return buffer;
}

/**
 * What {@link decodeRecord} found at an offset: a good record (`ok`, with its size in the file), a
 * plausible header whose record runs past the bytes given (`short`: read `size` bytes from the offset
 * and try again, or, at the end of the file, a torn write), or damage (`bad`; `size` is the size the
 * length field claims when that is plausible, a hint where the next record may start).
 */
export type DecodedRecord =
  | { readonly status: 'ok'; readonly event: StoredEvent; readonly size: number }
  | { readonly status: 'short'; readonly size: number }
  | { readonly status: 'bad'; readonly size: number | undefined };

/** The header's claimed record size when every header field is plausible, else undefined. */
function plausibleSize(source: Buffer, offset: number): number | undefined {
  if (source.readUInt16LE(offset + 4) !== RECORD_MAGIC) return undefined;
  const kind = source[offset + 6] ?? 0;
  const flags = source[offset + 7] ?? 0;
  const length = source.readUInt32LE(offset + 8);
  if (kind < KIND_STDOUT || kind > KIND_GAP || length > MAX_RECORD_PAYLOAD_BYTES) return undefined;
  if ((kind === KIND_EXITED || kind === KIND_CLOSED) && length !== 0) return undefined;
  if (kind === KIND_GAP && length !== GAP_PAYLOAD_BYTES) return undefined;
  if ((flags & ~FLAG_SANDBOX_DENIED) !== 0 || (kind !== KIND_EXITED && (flags !== 0 || source.readInt32LE(offset + 12) !== 0))) return undefined;
  if (source.readUInt32LE(offset + 20) > MAX_HIGH_WORD || source.readUInt32LE(offset + 28) > MAX_HIGH_WORD) return undefined;
  if (readU64(source, offset + 16) < 1) return undefined;
  return RECORD_HEADER_BYTES + length;
}

function readU64(source: Buffer, offset: number): number {
  return source.readUInt32LE(offset) + source.readUInt32LE(offset + 4) * TWO_32;
}

/**
 * Decodes the record at `offset` in `source`, looking no further than `end`. The payload of an output
 * event is a view into `source` (not a copy): whoever reads owns `source` and hands it on.
 */
export function decodeRecord(source: Buffer, offset: number, end: number): DecodedRecord {
  if (end - offset < RECORD_HEADER_BYTES) return { status: 'short', size: RECORD_HEADER_BYTES };
  const size = plausibleSize(source, offset);
  if (size === undefined) return { status: 'bad', size: undefined };
  if (end - offset < size) return { status: 'short', size };
  if (crc32(source.subarray(offset + 4, offset + size)) !== source.readUInt32LE(offset)) return { status: 'bad', size };
  return { status: 'ok', event: eventAt(source, offset, size), size };
}

function eventAt(source: Buffer, offset: number, size: number): StoredEvent {
  const seq = readU64(source, offset + 16);
  const time = readU64(source, offset + 24);
  const kind = source[offset + 6];
  if (kind === KIND_GAP) {
    const fromSeq = readU64(source, offset + RECORD_HEADER_BYTES);
    return { type: 'gap', seq, fromSeq: fromSeq >= 1 && fromSeq <= seq ? fromSeq : seq, droppedBytes: readU64(source, offset + RECORD_HEADER_BYTES + 8), time };
  }
  if (kind === KIND_EXITED) {
    const sandboxDenied = ((source[offset + 7] ?? 0) & FLAG_SANDBOX_DENIED) !== 0;
    return { type: 'exited', seq, exitCode: source.readInt32LE(offset + 12), sandboxDenied, time };
  }
  if (kind === KIND_CLOSED) return { type: 'closed', seq, time };
  const stream = kind === KIND_STDOUT ? 'stdout' : kind === KIND_STDERR ? 'stderr' : 'pty';
  const chunk = new Uint8Array(source.buffer, source.byteOffset + offset + RECORD_HEADER_BYTES, size - RECORD_HEADER_BYTES);
  return { type: 'output', seq, stream, chunk, time };
}
