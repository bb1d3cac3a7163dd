/** Errors of an environment as a whole: recovering, failed, refused a socket, closed. */
import { ExecClientError } from './exec-client-error';

/** `environment/status` while the environment is recovering: it fails fast, it does not wait. */
export class EnvironmentRecoveringError extends ExecClientError {
  readonly code = 'ENVIRONMENT_RECOVERING';
  constructor(
    /** The recovering environment. */ readonly environmentId: string,
  ) {
    super(`exec-server environment is recovering`);
  }
}

/** Why a resume failed. */
export type ResumeFailure = 'timeout' | 'unknownSession' | 'rejected' | 'noReconnect';

/** The session could not be resumed after a disconnect; the environment has failed. */
export class ResumeFailedError extends ExecClientError {
  readonly code = 'RESUME_FAILED';
  constructor(
    /** Why: the deadline passed, the executor forgot the session, refused it, or no socket can come. */ readonly reason: ResumeFailure,
    disconnect: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${disconnect}; failed to resume exec-server session: ${detail}`, options);
  }
}

/**
 * Every call made on a failed environment (its own, its processes', filesystem's and HTTP client's)
 * fails with this; `cause` is the failure. A call already waiting for recovery when recovery failed gets
 * the failure itself; a closed manager's calls get ClosedError.
 */
export class EnvironmentFailedError extends ExecClientError {
  readonly code = 'ENVIRONMENT_FAILED';
  constructor(
    /** The failed environment. */ readonly environmentId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A socket handed to the manager was refused (an initial resume id, an overlapping replacement, ...). */
export class ReplacementRejectedError extends ExecClientError {
  readonly code = 'REPLACEMENT_REJECTED';
}

/** The manager, environment or connection was closed by its owner. */
export class ClosedError extends ExecClientError {
  readonly code = 'CLOSED';
}
