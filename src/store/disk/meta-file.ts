/**
 * A process's metadata (`ProcessMeta`) as the disk log store keeps it next to its log (`meta.json`,
 * replaced by write-temp-then-rename), and where each process's directory is.
 */
import { join } from 'node:path';
import type { ProcessKey, ProcessMeta } from '../process-meta';
import { PROCESS_LOG_STATES } from '../process-meta';
import type { LogFs } from './log/log-fs';
import { readJsonObject, writeAtomically } from './log/log-fs';

/** The metadata file's name in a process's directory. */
export const META_FILE = 'meta.json';

/**
 * An id as a single directory name: percent-encoded (`encodeURIComponent`, dots and stars too), so no id
 * can name `.`, `..` or a path; the empty id is `%`.
 */
export const pathComponent = (id: string): string => (id === '' ? '%' : encodeURIComponent(id).replace(/\./g, '%2E').replace(/\*/g, '%2A'));

/** The directory of a process's log: `<dataDir>/processes/<environmentId>/<processId>`. */
export const processDir = (dataDir: string, key: ProcessKey): string => join(dataDir, 'processes', pathComponent(key.environmentId), pathComponent(key.processId));

/** The id a directory name stands for (undefined when it is not one {@link pathComponent} makes). */
export function idOfComponent(name: string): string | undefined {
  if (name === '%') return '';
  try {
    const id = decodeURIComponent(name);
    return pathComponent(id) === name ? id : undefined;
  } catch {
    return undefined;
  }
}

const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);
const orNull = <T>(value: unknown, is: (v: unknown) => v is T): T | null => (is(value) ? value : null);

/** The metadata in `dir`, or undefined when there is none or it cannot be read as metadata. */
export async function readMeta(fs: LogFs, dir: string): Promise<ProcessMeta | undefined> {
  const fields = await readJsonObject(fs, join(dir, META_FILE));
  if (fields === undefined) return undefined;
  const { environmentId, processId, argv, tty, state, startedAt } = fields;
  if (typeof environmentId !== 'string' || typeof processId !== 'string' || !isTime(startedAt)) return undefined;
  const known = PROCESS_LOG_STATES.find((candidate) => candidate === state);
  return {
    environmentId,
    processId,
    argv: Array.isArray(argv) ? argv.filter((arg): arg is string => typeof arg === 'string') : [],
    tty: tty === true,
    state: known ?? 'unknown',
    exitCode: orNull(fields['exitCode'], isTime),
    startedAt,
    exitedAt: orNull(fields['exitedAt'], isTime),
    endedAt: orNull(fields['endedAt'], isTime),
    released: fields['released'] === true,
    lostReason: typeof fields['lostReason'] === 'string' ? fields['lostReason'] : null,
    ...(typeof fields['startedBy'] === 'string' ? { startedBy: fields['startedBy'] } : {}),
  };
}

/** Replaces the metadata in `dir`. Rejects with the file system's error. */
export async function writeMeta(fs: LogFs, dir: string, meta: ProcessMeta): Promise<void> {
  await writeAtomically(fs, join(dir, META_FILE), Buffer.from(`${JSON.stringify({ version: 1, ...meta })}\n`, 'utf8'));
}
