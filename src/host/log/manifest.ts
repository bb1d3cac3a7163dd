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
  return { fromSeq, toSeq, events, bytes };
}

/** Replaces the manifest of the log in `dir`. Rejects with the file system's error. */
export async function writeManifest(fs: LogFs, dir: string, dropped: DroppedRange): Promise<void> {
  await writeAtomically(fs, join(dir, MANIFEST_FILE), Buffer.from(`${JSON.stringify({ version: 1, dropped })}\n`, 'utf8'));
}
