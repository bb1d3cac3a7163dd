/**
 * What an `ExecClient` is built with: its options, the session takeover a restarted host asks for, and
 * the recovery deadline's default.
 */
import type { SchedulerLike } from 'rxjs';
import type { RpcError } from '../errors';
import type { RpcConnectionOptions } from '../rpc/rpc-connection';

/** codex's recovery deadline: well inside the executor's 80 s detached-session retention. */
export const DEFAULT_RECOVERY_DEADLINE_MS = 25_000;

/** Options of `ExecClient`. */
export interface ExecClientOptions {
  readonly clientName: string;
  /** @default 10000 */
  readonly initializeTimeoutMs?: number | undefined;
  /** A session to resume on the first socket (dialled mode only). */
  readonly resumeSessionId?: string | undefined;
  /** @default 25000 */
  readonly recoveryDeadlineMs?: number | undefined;
  readonly scheduler?: SchedulerLike | undefined;
  /** Options for each socket's RpcConnection (keepalive, timeouts, server requests). */
  readonly rpc?: RpcConnectionOptions | undefined;
  /** Whether a lost connection can be replaced (false for stdio: a drop is final). */
  readonly reconnectable: boolean;
  /** Take over an executor's session on the first socket (a host restarted; accepted mode). */
  readonly takeover?: SessionTakeover | undefined;
  /** The caller's say on the first socket's session, before any process is read on it (see {@link SessionAdmission}). */
  readonly admit?: SessionAdmission | undefined;
}

/**
 * Called once, on the first socket, when the executor has answered `initialize` on it (the session is
 * attached to this connection now, and the executor lets no other connection hold it) and before any
 * process is read or the client attaches: a host claims the environment there, since only a socket whose
 * executor answers can get so far. `resumed`: the session asked for was resumed (false for a new one).
 * Processes the caller registers meanwhile (`ExecClient.addProcess`) are bound and read on this socket.
 * A rejection fails the attempt with its error (the first socket's: the client fails, the socket closes).
 */
export type SessionAdmission = (session: AdmittedSession) => Promise<void>;

/** The session a {@link SessionAdmission} is asked about. */
export interface AdmittedSession {
  /** The executor's session id on this socket. */
  readonly sessionId: string;
  /** Whether it is the session the client asked to resume (false: a new one). */
  readonly resumed: boolean;
}

/**
 * Taking over a session on the first socket (`EnvironmentManager.adoptAcceptedWebsocket`): `initialize`
 * resumes `sessionId`; when the executor no longer has it (-32600 `unknown session id`), every registered
 * process is abandoned, `sessionLost` is told, and a plain `initialize` follows on the same socket. On
 * the first recovery, a process the executor no longer knows (-32600 `unknown process id`) is abandoned
 * and `processLost` told, instead of failing it.
 */
export interface SessionTakeover {
  readonly sessionId: string;
  readonly sessionLost: (error: RpcError) => void;
  readonly processLost: (processId: string, error: RpcError) => void;
}
