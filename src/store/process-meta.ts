/**
 * What a log store knows about each process beside its output: how it was started, its last known
 * state, when it started and ended. After a restart it is what lists the processes of before. The
 * words both ports use: a process is named by a {@link ProcessKey}.
 */

/**
 * A process's last known state: `running`; `exited` (output may still follow); `closed` (its output
 * ended); `failed` (its stream failed on the host's side); `unknown` (it was running or exited when
 * the host stopped: nobody knows how it ended); `lost` (a restarted host could not take it back: its
 * executor no longer had it; `lostReason` says why).
 */
export type ProcessLogState = 'running' | 'exited' | 'closed' | 'failed' | 'unknown' | 'lost';

/** The states of {@link ProcessLogState}, for a store that reads them back. */
export const PROCESS_LOG_STATES: readonly ProcessLogState[] = ['running', 'exited', 'closed', 'failed', 'unknown', 'lost'];

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

/** Whether a process still runs (exited counts: output may follow until closed). */
export const stillRunning = (meta: ProcessMeta): boolean => meta.state === 'running' || meta.state === 'exited';

/** When a process stopped running (or, for want of that, exited or started): the age a store evicts by. */
export const endedAt = (meta: ProcessMeta): number => meta.endedAt ?? meta.exitedAt ?? meta.startedAt;

/** The metadata of a process whose log is made now (state `running`, nothing else known yet). */
export const startingMeta = (key: ProcessKey, launch: ProcessLaunch, now: number): ProcessMeta => ({
  environmentId: key.environmentId,
  processId: key.processId,
  argv: [...launch.argv],
  tty: launch.tty,
  state: 'running',
  exitCode: null,
  startedAt: now,
  exitedAt: null,
  endedAt: null,
  released: false,
  lostReason: null,
});

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The order a store lists processes in: oldest first, then by environment and process id. */
export const listOrder = (a: ProcessMeta, b: ProcessMeta): number =>
  a.startedAt - b.startedAt || compare(a.environmentId, b.environmentId) || compare(a.processId, b.processId);

/** One key's text, for a map of processes: the two ids joined by a character no id holds. */
export const keyOf = (key: ProcessKey): string => `${key.environmentId}\u0000${key.processId}`;
