/**
 * The manifest of one output log (`manifest.json`, replaced by write-temp-then-rename): what its quota
 * dropped, so that the one `truncated` marker for it, with its exact counts, survives a restart.
 */
import { join } from 'node:path';
import type { LogFs } from './log-fs';
import { readJsonObject, writeAtomically } from './log-fs';

/** The manifest's file name in a log's directory. */
export const MANIFEST_FILE = 'manifest.json';

/** The seqs the quota dropped (whole segments between the first and the newest ones), with exact counts. */
export interface DroppedRange {
  /** The first dropped seq. */
  readonly fromSeq: number;
  /** The last dropped seq. */
  readonly toSeq: number;
  /** Events dropped (`toSeq - fromSeq + 1`). */
  readonly events: number;
  /** Output payload bytes those events held. */
  readonly bytes: number;
  /**
   * Where each widening of the range ended, with the bytes dropped up to it (cumulative, in order): a
   * reader that got the range's earlier part in an earlier marker gets only what was dropped after it,
   * with its exact bytes. Absent in a manifest of before (then the range is one step).
   */
  readonly steps?: readonly DroppedStep[];
}

/** One widening of a {@link DroppedRange}: the last seq dropped by then, and the bytes dropped up to it. */
export interface DroppedStep {
  /** The range's last seq after this widening. */
  readonly toSeq: number;
  /** Bytes dropped from the range's start through `toSeq`. */
  readonly bytes: number;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** The dropped range a manifest holds; undefined when there is none, or it cannot be read as one. */
export async function readManifest(fs: LogFs, dir: string): Promise<DroppedRange | undefined> {
  const parsed = await readJsonObject(fs, join(dir, MANIFEST_FILE));
  if (parsed === undefined) return undefined;
  const dropped: unknown = parsed['dropped'];
  if (typeof dropped !== 'object' || dropped === null) return undefined;
  const { fromSeq, toSeq, events, bytes } = { fromSeq: undefined, toSeq: undefined, events: undefined, bytes: undefined, ...dropped };
  if (!isCount(fromSeq) || !isCount(toSeq) || !isCount(events) || !isCount(bytes) || fromSeq < 1 || toSeq < fromSeq) return undefined;
  const steps = readSteps(dropped, toSeq, bytes);
  return { fromSeq, toSeq, events, bytes, steps };
}

/** The steps of a manifest's range, checked (increasing, ending at the range's end); one step when absent or unreadable. */
function readSteps(dropped: object, toSeq: number, bytes: number): readonly DroppedStep[] {
  const raw: unknown = 'steps' in dropped ? dropped.steps : undefined;
  const whole = [{ toSeq, bytes }];
  if (!Array.isArray(raw)) return whole;
  const steps: DroppedStep[] = [];
  for (const step of raw as unknown[]) {
    if (typeof step !== 'object' || step === null) return whole;
    const { toSeq: at, bytes: upTo } = { toSeq: undefined, bytes: undefined, ...step };
    const last = steps[steps.length - 1];
    if (!isCount(at) || !isCount(upTo) || (last !== undefined && (at <= last.toSeq || upTo < last.bytes))) return whole;
    steps.push({ toSeq: at, bytes: upTo });
  }
  const end = steps[steps.length - 1];
  return end !== undefined && end.toSeq === toSeq && end.bytes === bytes ? steps : whole;
}

/** Replaces the manifest of the log in `dir`. Rejects with the file system's error. */
export async function writeManifest(fs: LogFs, dir: string, dropped: DroppedRange): Promise<void> {
  await writeAtomically(fs, join(dir, MANIFEST_FILE), Buffer.from(`${JSON.stringify({ version: 1, dropped })}\n`, 'utf8'));
}
