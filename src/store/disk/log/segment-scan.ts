/**
 * Reads the records of one segment file in order, a window at a time, telling good records from
 * damage. Used by readers (from a sparse index entry on) and by recovery at open (the whole last
 * segment).
 *
 * After damage (a CRC mismatch, an implausible header, a record running past the end, a seq that does
 * not increase) the scan picks up at the first of these that holds a good record with a higher seq,
 * in file order: the offset the damaged record's length field claims (right when only its payload or
 * seq was hit), then the sparse index's entries after it (true record starts the writer noted). It
 * never searches the bytes in between for something that looks like a record: output may itself
 * contain records (a process printing a log segment), and those must never be served.
 */
import type { StoredEvent } from './stored-event';
import type { LogFile } from './log-fs';
import type { DecodedRecord } from './record';
import { decodeRecord, RECORD_HEADER_BYTES } from './record';
import type { IndexEntry } from './sparse-index';

/** One step of a scan: a good record at `offset`, or damaged bytes from `offset` to `end`. */
export type ScanItem =
  | { readonly type: 'record'; readonly event: StoredEvent; readonly offset: number; readonly size: number }
  | {
      readonly type: 'damage';
      readonly offset: number;
      /** Where the scan picks up again (the good record `resume`), or the end of the scanned range. */
      readonly end: number;
      /** The good record the scan picks up at, or undefined when nothing good follows in the range. */
      readonly resume: StoredEvent | undefined;
    };

/** The file and bounds of a scan. */
export interface ScanRange {
  /** The segment file, open for reading. */
  readonly file: LogFile;
  /** Where to start (a record start: 0 or an index entry's offset). */
  readonly from: number;
  /** Where to stop: the segment's written bytes. */
  readonly end: number;
  /** The seq before the first record expected at `from` (a record must have a higher one). */
  readonly afterSeq: number;
  /** The segment's index entries: where to pick up after damage. */
  readonly boundaries: readonly IndexEntry[];
  /** Bytes read at a time (a record larger than it is read whole). */
  readonly windowBytes: number;
}

/** A window of the file in memory. A new buffer every fill: payload views handed out stay valid. */
class Window {
  private buffer = Buffer.alloc(0);
  private start = 0;
  private filled = 0;

  constructor(
    private readonly file: LogFile,
    /** The end of the readable range; lowered when the file turns out shorter. */ public end: number,
    private readonly windowBytes: number,
  ) {}

  /** Decodes the record at `offset`, reading what it needs; `short` only when it runs past `end`. */
  async decodeAt(offset: number): Promise<DecodedRecord> {
    for (let need = RECORD_HEADER_BYTES; ; ) {
      if (offset + need > this.end) return { status: 'short', size: need };
      if (offset < this.start || offset + need > this.start + this.filled) await this.fill(offset, need);
      const decoded = decodeRecord(this.buffer, offset - this.start, this.filled);
      if (decoded.status !== 'short' || decoded.size <= need) return decoded.status === 'short' ? { status: 'short', size: decoded.size } : decoded;
      need = decoded.size;
    }
  }

  private async fill(offset: number, need: number): Promise<void> {
    const size = Math.min(this.end - offset, Math.max(this.windowBytes, need));
    const buffer = Buffer.allocUnsafe(size);
    const read = await this.file.read(buffer, size, offset);
    this.buffer = buffer;
    this.start = offset;
    this.filled = read;
    if (read < size) this.end = offset + read;
  }
}

/** The records and damage of a range of a segment, in file order. Completes at the range's end. */
export async function* scanRecords(range: ScanRange): AsyncGenerator<ScanItem> {
  const window = new Window(range.file, range.end, range.windowBytes);
  let offset = range.from;
  let lastSeq = range.afterSeq;
  while (offset < window.end) {
    const decoded = await window.decodeAt(offset);
    if (decoded.status === 'ok' && decoded.event.seq > lastSeq) {
      yield { type: 'record', event: decoded.event, offset, size: decoded.size };
      lastSeq = decoded.event.seq;
      offset += decoded.size;
      continue;
    }
    const claimed = decoded.status === 'short' ? undefined : decoded.size;
    const resume = await resync(window, range.boundaries, offset, claimed, lastSeq);
    yield { type: 'damage', offset, end: resume?.offset ?? window.end, resume: resume?.event };
    if (resume === undefined) return;
    offset = resume.offset;
  }
}

/** The first good record after damage at `offset` (see the module's doc), or undefined. */
async function resync(
  window: Window,
  boundaries: readonly IndexEntry[],
  offset: number,
  claimed: number | undefined,
  lastSeq: number,
): Promise<{ readonly offset: number; readonly event: StoredEvent } | undefined> {
  const candidates = boundaries.filter((entry) => entry.offset > offset);
  if (claimed !== undefined) candidates.push({ offset: offset + claimed, seq: 0 });
  candidates.sort((a, b) => a.offset - b.offset);
  for (const candidate of candidates) {
    if (candidate.offset + RECORD_HEADER_BYTES > window.end) break;
    const decoded = await window.decodeAt(candidate.offset);
    if (decoded.status !== 'ok' || decoded.event.seq <= lastSeq) continue;
    // An index entry is a hint: its record must carry its seq. The claimed length has no seq to check.
    if (candidate.seq !== 0 && decoded.event.seq !== candidate.seq) continue;
    return { offset: candidate.offset, event: decoded.event };
  }
  return undefined;
}
