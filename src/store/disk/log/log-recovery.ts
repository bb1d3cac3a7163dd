/**
 * Opening an output log found on disk (after a restart, or a crash): its segments, what its quota
 * dropped, and its last segment checked record by record. A torn last record (a crash mid-write: the
 * file ends inside it, or its CRC fails and nothing good follows) is cut off, the file truncated to the
 * last good record. Damage with good records after it is left in place: readers get a marker for it.
 * Earlier segments are checked lazily, by the readers that read them.
 */
import { OutputLogReadError } from '../../../errors';
import { errnoOf } from '../../errno';
import type { LogFs } from './log-fs';
import { LogState } from './log-state';
import type { DroppedRange } from './manifest';
import { readManifest } from './manifest';
import { RECORD_HEADER_BYTES } from './record';
import { parseSegmentName, Segment } from './segment';
import { scanRecords } from './segment-scan';
import { SparseIndex } from './sparse-index';
import type { ResolvedLogOptions } from './output-log-options';

/** What {@link recoverLog} found. */
export interface RecoveredLog {
  /** The segments, in seq order; the last one checked and cut. */
  readonly segments: Segment[];
  /** What the quota dropped, from the manifest. */
  readonly dropped: DroppedRange | undefined;
  /** The last good seq of the log (0 when it holds none). */
  readonly lastSeq: number;
  /** Bytes cut off a torn tail (0 when the log ended cleanly). */
  readonly cutBytes: number;
}

/** How recovery reads and re-indexes. */
export interface RecoveryOptions {
  /** Bytes between sparse index entries. */
  readonly indexIntervalBytes: number;
  /** Bytes read at a time. */
  readonly windowBytes: number;
}

/** Opens the log in `dir` (see the module's doc). Rejects with the file system's error when a read fails. */
export async function recoverLog(fs: LogFs, dir: string, options: RecoveryOptions): Promise<RecoveredLog> {
  const dropped = await readManifest(fs, dir);
  const bases = (await fs.readdir(dir))
    .map(parseSegmentName)
    .filter((base): base is number => base !== undefined)
    .sort((a, b) => a - b);
  const segments: Segment[] = [];
  for (const base of bases) {
    const segment = new Segment(dir, base);
    if (dropped !== undefined && base >= dropped.fromSeq && base <= dropped.toSeq) {
      // Dropped by the quota: the manifest was written, the crash came before the files went.
      await fs.unlink(segment.path);
      await fs.unlink(segment.indexPath);
      continue;
    }
    segment.fileBytes = segment.takenBytes = (await fs.fileSize(segment.path)) ?? 0;
    segments.push(segment);
  }
  segments.forEach((segment, i) => {
    const next = segments[i + 1];
    if (next !== undefined) assumeWhole(segment, next, dropped);
  });
  const last = segments[segments.length - 1];
  if (last === undefined) return { segments, dropped, lastSeq: dropped?.toSeq ?? 0, cutBytes: 0 };
  const cutBytes = await recoverLast(fs, last, options);
  return { segments, dropped, lastSeq: last.lastSeq, cutBytes };
}

/** A segment before the last holds every seq up to the next one's first (or up to the dropped range). */
function assumeWhole(segment: Segment, next: Segment, dropped: DroppedRange | undefined): void {
  let lastSeq = next.baseSeq - 1;
  if (dropped !== undefined && dropped.fromSeq > segment.baseSeq && dropped.fromSeq <= lastSeq) lastSeq = dropped.fromSeq - 1;
  segment.lastSeq = segment.writtenSeq = lastSeq;
  segment.payloadBytes = Math.max(0, segment.fileBytes - RECORD_HEADER_BYTES * segment.events);
}

/** Checks every record of the last segment, cuts a torn tail, rebuilds its index; returns the bytes cut. */
async function recoverLast(fs: LogFs, segment: Segment, options: RecoveryOptions): Promise<number> {
  const stored = SparseIndex.decode((await fs.readFile(segment.indexPath)) ?? Buffer.alloc(0), segment.fileBytes);
  const index = new SparseIndex();
  let goodEnd = 0;
  let lastSeq = segment.baseSeq - 1;
  let payloadBytes = 0;
  const file = await fs.open(segment.path, 'read');
  try {
    const boundaries = stored.entriesAfter(-1);
    const range = { file, from: 0, end: segment.fileBytes, afterSeq: lastSeq, boundaries, windowBytes: options.windowBytes };
    for await (const item of scanRecords(range)) {
      if (item.type === 'damage') {
        if (item.resume === undefined) break; // nothing good after it: a torn tail
        continue;
      }
      if (item.offset - index.lastOffset >= options.indexIntervalBytes) index.add(item.event.seq, item.offset);
      goodEnd = item.offset + item.size;
      lastSeq = item.event.seq;
      if (item.event.type === 'output') payloadBytes += item.size - RECORD_HEADER_BYTES;
    }
  } finally {
    await file.close();
  }
  const cut = segment.fileBytes - goodEnd;
  if (cut > 0) await cutTail(fs, segment, goodEnd);
  segment.fileBytes = segment.takenBytes = goodEnd;
  segment.lastSeq = segment.writtenSeq = lastSeq;
  segment.payloadBytes = payloadBytes;
  segment.index = index;
  segment.indexWritten = index.length;
  if (cut > 0 || index.length !== stored.length) await rewriteIndex(fs, segment, index);
  return cut;
}

/** Truncates the segment file to its last good record. */
async function cutTail(fs: LogFs, segment: Segment, length: number): Promise<void> {
  const file = await fs.open(segment.path, 'update');
  try {
    await file.truncate(length);
    await file.datasync();
  } finally {
    await file.close();
  }
}

/** Replaces the index file with the rebuilt index (a hint: no temp file needed, a torn one is checked on use). */
async function rewriteIndex(fs: LogFs, segment: Segment, index: SparseIndex): Promise<void> {
  const file = await fs.open(segment.indexPath, 'replace');
  try {
    await file.write(index.encode());
  } finally {
    await file.close();
  }
}

/** The state of the log found in `dir`, recovered. Rejects with OutputLogReadError when its files cannot be read. */
export async function recoveredState(dir: string, processId: string, resolved: ResolvedLogOptions): Promise<LogState> {
  const state = new LogState(dir, processId, resolved.fs);
  const recovered = await recoverLog(resolved.fs, dir, { indexIntervalBytes: resolved.indexIntervalBytes, windowBytes: resolved.readWindowBytes }).catch((error: unknown) => {
    throw new OutputLogReadError(processId, errnoOf(error));
  });
  state.segments.push(...recovered.segments);
  state.dropped = recovered.dropped;
  state.lastSeq = state.heldSeq = recovered.lastSeq;
  return state;
}
