/**
 * What the store keeps about each process next to its log (`meta.json`, replaced by
 * write-temp-then-rename): how it was started, its last known state, when it started and ended. After
 * a restart it is what lists the processes of before.
 */
import { join } from 'node:path';
import type { LogFs } from './log-fs';
import { readJsonObject, writeAtomically } from './log-fs';

/** The metadata file's name in a process's directory. */
export const META_FILE = 'meta.json';

/**
 * A process's last known state: `running`; `exited` (output may still follow); `closed` (its output
 * ended); `failed` (its stream failed on the host's side); `unknown` (it was running or exited when
 * the host stopped: nobody knows how it ended); `lost` (a restarted host could not take it back: its
 * executor no longer had it; `lostReason` says why).
 */
export type ProcessLogState = 'running' | 'exited' | 'closed' | 'failed' | 'unknown' | 'lost';

/** Which process: its environment and its id there. */
export interface ProcessKey {
  /** The environment (executor) the process runs on. */
  readonly environmentId: string;
  /** The process's id in that environment. */
  readonly processId: string;
}

/** How a process was started. */
export interface ProcessLaunch {
  /** Its command line. */
  readonly argv: readonly string[];
  /** Whether it runs on a pty. */
  readonly tty: boolean;
}

/** What the store knows about one process. */
export interface ProcessMeta extends ProcessKey, ProcessLaunch {
  /** Its last known state. */
  readonly state: ProcessLogState;
  /** Its exit code, once it exited. */
  readonly exitCode: number | null;
  /** When its log was created (ms since the epoch). */
  readonly startedAt: number;
  /** When it exited. */
  readonly exitedAt: number | null;
  /** When it stopped running: closed, failed, or found `unknown` at a restart. */
  readonly endedAt: number | null;
  /** Its owner released its history: the first log the store's bound removes. */
  readonly released: boolean;
  /** Why it is `lost` (null otherwise). */
  readonly lostReason: string | null;
  /** The name of the operator token that started it through the operator API (never the token); absent otherwise, or from an older host. */
  readonly startedBy?: string;
}

const STATES: readonly ProcessLogState[] = ['running', 'exited', 'closed', 'failed', 'unknown', 'lost'];

/** Whether a process still runs (exited counts: output may follow until closed). */
export const stillRunning = (meta: ProcessMeta): boolean => meta.state === 'running' || meta.state === 'exited';

/** When a process stopped running (or, for want of that, exited or started): the age the store evicts by. */
export const endedAt = (meta: ProcessMeta): number => meta.endedAt ?? meta.exitedAt ?? meta.startedAt;

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
  const known = STATES.find((candidate) => candidate === state);
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
