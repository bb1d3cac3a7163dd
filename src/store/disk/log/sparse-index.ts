/**
 * The sparse index of one segment: an entry (seq, byte offset) every ~64 KiB of records, so that a
 * reader starts near the seq it wants instead of at the segment's start. It lives in its own file
 * (`<first seq>.idx`, 16 bytes an entry: seq u64 then offset u64, little-endian) and is only a hint:
 * the reader checks that the record at an entry's offset is good and has the entry's seq, and falls
 * back to the segment's start when it is not. The record at offset 0 (the segment's first seq) is
 * implicit.
 */

/** Bytes of one index entry in the file. */
export const INDEX_ENTRY_BYTES = 16;
const TWO_32 = 0x1_0000_0000;

/** One index entry: where the record of `seq` starts in the segment. */
export interface IndexEntry {
  /** The seq of the record. */
  readonly seq: number;
  /** Its byte offset in the segment file. */
  readonly offset: number;
}

/** The entries of one segment, in increasing seq and offset order. */
export class SparseIndex {
  private readonly seqs: number[] = [];
  private readonly offsets: number[] = [];

  /** Entries held. */
  get length(): number {
    return this.seqs.length;
  }

  /** The offset of the last entry (0 when none: the implicit entry of the first record). */
  get lastOffset(): number {
    return this.offsets[this.offsets.length - 1] ?? 0;
  }

  /** Adds an entry after the last one; one that does not increase both seq and offset is ignored. */
  add(seq: number, offset: number): void {
    const last = this.seqs.length - 1;
    if (last >= 0 && (seq <= (this.seqs[last] ?? 0) || offset <= (this.offsets[last] ?? 0))) return;
    this.seqs.push(seq);
    this.offsets.push(offset);
  }

  /** The last entry whose seq is at most `seq`, or undefined (start at offset 0). */
  floor(seq: number): IndexEntry | undefined {
    let low = 0;
    let high = this.seqs.length - 1;
    let found = -1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if ((this.seqs[mid] ?? 0) <= seq) {
        found = mid;
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return this.entry(found);
  }

  /** The entries whose offset is above `offset`, in order: where a reader may pick up after damage. */
  entriesAfter(offset: number): IndexEntry[] {
    const after: IndexEntry[] = [];
    for (let i = 0; i < this.offsets.length; i += 1) {
      const entry = this.entry(i);
      if (entry !== undefined && entry.offset > offset) after.push(entry);
    }
    return after;
  }

  /** Drops the entries at or past `size` bytes (the segment was cut there). */
  truncate(size: number): void {
    while (this.offsets.length > 0 && (this.offsets[this.offsets.length - 1] ?? 0) >= size) {
      this.offsets.pop();
      this.seqs.pop();
    }
  }

  /** The number of entries whose offset is below `offset` (those a file of that size can back). */
  countBelow(offset: number): number {
    let count = this.offsets.length;
    while (count > 0 && (this.offsets[count - 1] ?? 0) >= offset) count -= 1;
    return count;
  }

  /** The entries from the `from`-th up to (not including) the `to`-th, as the file holds them. */
  encode(from = 0, to = this.seqs.length): Buffer {
    const count = Math.max(0, Math.min(to, this.seqs.length) - from);
    const buffer = Buffer.allocUnsafe(count * INDEX_ENTRY_BYTES);
    for (let i = 0; i < count; i += 1) {
      const at = i * INDEX_ENTRY_BYTES;
      writeU64(buffer, at, this.seqs[from + i] ?? 0);
      writeU64(buffer, at + 8, this.offsets[from + i] ?? 0);
    }
    return buffer;
  }

  /**
   * The index a file holds, for a segment of `segmentBytes`: a torn last entry, entries that do not
   * increase and entries at or past the segment's end are dropped (the file is a hint, not a truth).
   */
  static decode(data: Buffer, segmentBytes: number): SparseIndex {
    const index = new SparseIndex();
    for (let at = 0; at + INDEX_ENTRY_BYTES <= data.byteLength; at += INDEX_ENTRY_BYTES) {
      const offset = readU64(data, at + 8);
      if (offset >= segmentBytes) break;
      index.add(readU64(data, at), offset);
    }
    return index;
  }

  private entry(i: number): IndexEntry | undefined {
    const seq = this.seqs[i];
    const offset = this.offsets[i];
    return seq === undefined || offset === undefined ? undefined : { seq, offset };
  }
}

function writeU64(target: Buffer, offset: number, value: number): void {
  target.writeUInt32LE(value % TWO_32, offset);
  target.writeUInt32LE(Math.floor(value / TWO_32), offset + 4);
}

function readU64(source: Buffer, offset: number): number {
  return source.readUInt32LE(offset) + source.readUInt32LE(offset + 4) * TWO_32;
}
