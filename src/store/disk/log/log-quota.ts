/**
 * Keeping an output log within a size: whole segments go from the middle, the first segment (how the
 * process started) and the newest ones (what it does now) stay. What went is ONE dropped range right
 * after the first segment, counted exactly and persisted in the log's manifest before the files go, so
 * that readers, also after a restart, get one `truncated` marker for it.
 */
import type { LogState } from './log-state';
import type { LogSync } from './log-sync';
import type { DroppedRange } from './manifest';
import { writeManifest } from './manifest';
import type { Segment } from './segment';

/** Drops the middle segments of one log; one trim at a time. */
export class LogTrimmer {
  private running: Promise<number> = Promise.resolve(0);

  constructor(
    private readonly state: LogState,
    private readonly sync: LogSync,
    /** Called with the error when the manifest cannot be written (the log fails). */ private readonly failed: (error: unknown) => void,
  ) {}

  /**
   * Drops segments after the first, oldest first, until the log's bytes are at most `limitBytes` or
   * only the first and the active segment are left; a segment with writes still queued stays.
   * Resolves the bytes freed; never rejects.
   */
  trimTo(limitBytes: number): Promise<number> {
    this.running = this.running.then(() => this.trim(limitBytes));
    return this.running;
  }

  private async trim(limitBytes: number): Promise<number> {
    const state = this.state;
    const victims = pickVictims(state.segments, state.diskBytes, limitBytes);
    if (victims.length === 0 || state.end === 'removed') return 0;
    const dropped = widen(state.dropped, victims);
    // Readers see the marker at once; the files go only once the manifest says so.
    state.segments.splice(1, victims.length);
    state.droppedSegments += victims.length;
    state.dropped = dropped;
    try {
      await writeManifest(state.fs, state.dir, dropped);
    } catch (error: unknown) {
      this.failed(error);
      return 0;
    }
    let freed = 0;
    for (const victim of victims) {
      this.sync.forget(victim);
      const writer = victim.writer;
      victim.writer = undefined;
      await writer?.close().catch(() => undefined);
      await state.fs.unlink(victim.path).catch(() => undefined);
      await state.fs.unlink(victim.indexPath).catch(() => undefined);
      freed += victim.takenBytes;
    }
    return freed;
  }
}

/** The segments after the first to drop, in order, to get `totalBytes` down to `limitBytes`. */
function pickVictims(segments: readonly Segment[], totalBytes: number, limitBytes: number): Segment[] {
  const victims: Segment[] = [];
  let total = totalBytes;
  // The first segment and the last (active) one always stay.
  for (let i = 1; i < segments.length - 1 && total > limitBytes; i += 1) {
    const segment = segments[i];
    if (segment === undefined || segment.fileBytes !== segment.takenBytes) break;
    victims.push(segment);
    total -= segment.takenBytes;
  }
  return victims;
}

/** The dropped range after `victims` go too (they follow the range, or the first segment). */
function widen(dropped: DroppedRange | undefined, victims: readonly Segment[]): DroppedRange {
  let events = dropped?.events ?? 0;
  let bytes = dropped?.bytes ?? 0;
  for (const victim of victims) {
    events += victim.events;
    bytes += victim.payloadBytes;
  }
  const first = victims[0];
  const last = victims[victims.length - 1];
  const fromSeq = dropped?.fromSeq ?? first?.baseSeq ?? 1;
  const toSeq = last?.lastSeq ?? fromSeq - 1;
  const before = dropped?.steps ?? (dropped === undefined ? [] : [{ toSeq: dropped.toSeq, bytes: dropped.bytes }]);
  return { fromSeq, toSeq, events, bytes, steps: [...before, { toSeq, bytes }] };
}
