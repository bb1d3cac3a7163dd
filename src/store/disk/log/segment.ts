/**
 * One segment of an output log: an append-only file of records named by its first seq, zero-padded
 * to 20 digits so that names sort by seq (`00000000000000000001.seg`), and its sparse index next to it
 * (`….idx`). This is the bookkeeping both the writer and the readers share; it makes no I/O itself.
 */
import { join } from 'node:path';
import type { LogFile } from './log-fs';
import { SparseIndex } from './sparse-index';

const DIGITS = 20;
const SEGMENT_NAME = /^(\d{20})\.seg$/;

/** The file name of the segment whose first seq is `baseSeq`. */
export const segmentFileName = (baseSeq: number): string => `${String(baseSeq).padStart(DIGITS, '0')}.seg`;

/** The file name of its sparse index. */
export const indexFileName = (baseSeq: number): string => `${String(baseSeq).padStart(DIGITS, '0')}.idx`;

/** The first seq a segment file name carries, or undefined when `name` is not a segment's. */
export function parseSegmentName(name: string): number | undefined {
  const match = SEGMENT_NAME.exec(name);
  const seq = match === null ? NaN : Number(match[1]);
  return Number.isSafeInteger(seq) && seq >= 1 ? seq : undefined;
}

/**
 * A segment's state. `taken*` counts what the writer assigned to it (written or still pending);
 * `file*`/`written*` only what is in the file. Readers read a segment up to `fileBytes`, never further.
 */
export class Segment {
  /** Bytes in the file: records whose write completed. */
  fileBytes = 0;
  /** Bytes assigned to the segment: in the file plus pending. */
  takenBytes = 0;
  /** The last seq in the file (`baseSeq - 1` when none). */
  writtenSeq: number;
  /** The last seq assigned to the segment. */
  lastSeq: number;
  /** Output payload bytes assigned to the segment (exact for a segment this host wrote or scanned). */
  payloadBytes = 0;
  /** The sparse index, once loaded (the writer's segment always has it). */
  index: SparseIndex | undefined;
  /** Index entries already in the index file. */
  indexWritten = 0;
  /** The append-mode file the writer holds while the segment takes writes or awaits its last sync. */
  writer: LogFile | undefined;

  constructor(
    /** The log's directory. */ readonly dir: string,
    /** The first seq of the segment (its name). */ readonly baseSeq: number,
  ) {
    this.writtenSeq = baseSeq - 1;
    this.lastSeq = baseSeq - 1;
  }

  /** A new, empty segment for the writer, with an empty index. */
  static fresh(dir: string, baseSeq: number): Segment {
    const segment = new Segment(dir, baseSeq);
    segment.index = new SparseIndex();
    return segment;
  }

  /** The segment file's path. */
  get path(): string {
    return join(this.dir, segmentFileName(this.baseSeq));
  }

  /** The index file's path. */
  get indexPath(): string {
    return join(this.dir, indexFileName(this.baseSeq));
  }

  /** Events assigned to the segment. */
  get events(): number {
    return this.lastSeq - this.baseSeq + 1;
  }
}
