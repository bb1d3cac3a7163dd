import type { ExecProcess } from '../exec/exec-process';
import type { EnvironmentManager } from './environment-manager';

/** One process a restarted host held, as it persisted it (see {@link SessionAdoption}). */
export interface AdoptedProcessRecord {
  /** The process id on the executor. */
  readonly processId: string;
  /** The last seq the caller holds (0 = none): the adopted process goes on from `lastSeq + 1`. */
  readonly lastSeq: number;
  /** The writeId the next `process/write` uses (`ExecProcess.nextWriteId` when the host persisted it). */
  readonly nextWriteId: number;
  /** The argv `Environment.processes$` lists it with. @default [] */
  readonly argv?: readonly string[];
  /** Whether it runs on a pty, for `Environment.processes$`. @default false */
  readonly tty?: boolean;
}

/** What a restarted host persisted of an executor's session, to take it over on the executor's new socket. */
export interface SessionAdoption {
  /** The executor's session id (`Environment.sessionId` before the restart). */
  readonly sessionId: string;
  /** The processes the host followed in that session. */
  readonly processes: readonly AdoptedProcessRecord[];
}

/** A process of a {@link SessionAdoption} that could not be adopted, and why. */
export interface LostProcess {
  /** The record's process id. */
  readonly processId: string;
  /**
   * Why: the executor no longer has the session (its 80 s retention passed: the process was killed
   * with it), or the resumed session no longer knows the process id (it closed over 80 s ago).
   */
  readonly reason: string;
}

/** What `EnvironmentManager.adoptAcceptedWebsocket` resolves with. */
export interface AdoptedEnvironment {
  /** The manager, exactly like one made by `fromAcceptedWebsocket`; the caller closes it. */
  readonly manager: EnvironmentManager;
  /** true: the executor still had the session (resumed); false: it did not (a new session was made). */
  readonly resumed: boolean;
  /** The adopted processes, live again, registered in the environment's process table like started ones. */
  readonly processes: readonly ExecProcess[];
  /** Processes that could not be adopted, each with a clear reason; no ExecProcess is made for them. */
  readonly lost: readonly LostProcess[];
}
