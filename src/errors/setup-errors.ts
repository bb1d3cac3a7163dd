/** Errors of setting things up around the protocol: configuration, executors we spawn, helpers we run on them. */
import { ExecClientError } from './exec-client-error';

/**
 * A configuration is unusable: a file that cannot be read or parsed, or settings that contradict each
 * other. The message names the file, the line or the setting, never a secret found there.
 */
export class ConfigError extends ExecClientError {
  readonly code = 'CONFIG_INVALID';
}

/**
 * A codex executor exec-rx was to spawn did not start: its binary is missing, it exited or printed
 * something else than its URL during startup, or it did not start in time. Nothing is left running.
 */
export class ExecutorStartError extends ExecClientError {
  readonly code = 'EXECUTOR_START_FAILED';
}

/** The executor exec-rx spawned for a command ended while the command was running on it. */
export class ExecutorExitedError extends ExecClientError {
  readonly code = 'EXECUTOR_EXITED';
}

/** Which helper exec-rx runs on an executor failed: the stdin FIFO's setup, or the terminal sizer. */
export type HelperKind = 'stdinFifo' | 'ttySize';

/**
 * A helper process that exec-rx runs on the executor for a command failed (making the stdin FIFO,
 * sizing a terminal). The message carries the helper's own first line of stderr or its exit status.
 */
export class HelperFailedError extends ExecClientError {
  readonly code = 'HELPER_FAILED';
  constructor(
    /** The helper that failed. */ readonly helper: HelperKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
