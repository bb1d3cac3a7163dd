import type { AdmittedSession } from '../session/exec-client-options';

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
  /** A helper of another process (a stdin FIFO's feeder): adopted, but left off `Environment.processes$`. @default false */
  readonly unlisted?: boolean;
}

/**
 * The records of a {@link SessionAdoption} asked for once the executor has answered `initialize` on the
 * socket (so a host claims the environment only on a socket whose executor answers, and reads each
 * process's last seq only once it owns it). `session.resumed` false: the executor no longer had the
 * session (a new one was made), and every record returned is `lost`. A rejection fails the adoption with
 * its error (the socket closes).
 */
export type AdoptionRecords = (session: AdmittedSession) => Promise<readonly AdoptedProcessRecord[]>;

/** What a restarted host persisted of an executor's session, to take it over on the executor's new socket. */
export interface SessionAdoption {
  /** The executor's session id (`Environment.sessionId` before the restart). */
  readonly sessionId: string;
  /**
   * The processes the host followed in that session: known before the handshake (registered first, so
   * notifications redirected during `initialize` reach them), or asked for once the executor answered it
   * ({@link AdoptionRecords}: they are registered then, and what came for them before is in their reads).
   */
  readonly processes: readonly AdoptedProcessRecord[] | AdoptionRecords;
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
