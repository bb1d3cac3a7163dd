/** Errors of the host's output logs on disk: a write or a read the disk refused (ENOSPC, EIO, ...). */
import { ExecClientError } from './exec-client-error';

/**
 * What an output log was doing when the disk refused: making its files (`open`), appending (`write`),
 * syncing (`sync`), recording what its quota dropped (`manifest`), recording the process's state
 * (`metadata`), or removing its files (`remove`).
 */
export type LogWriteOperation = 'open' | 'write' | 'sync' | 'manifest' | 'metadata' | 'remove';

/** Each operation in words, as a message says it ("failed to write the process's metadata"). */
const IN_WORDS: Readonly<Record<LogWriteOperation, string>> = {
  open: 'make its files',
  write: 'write',
  sync: 'sync to the disk',
  manifest: 'record what its quota dropped',
  metadata: "write the process's metadata",
  remove: 'remove its files',
};

/**
 * Appending to a process's output log failed: the disk is full (`ENOSPC`), failing (`EIO`), or refused
 * a file (`EACCES`, ...). The log keeps what it already wrote and stops taking new events; other
 * processes' logs go on. The message names the process and the `errno` code, never a path (a data
 * directory may hold a secret in its name), which is also why the original error is not kept as `cause`.
 */
export class OutputLogError extends ExecClientError {
  readonly code = 'LOG_WRITE_FAILED';
  constructor(
    /** The process whose log failed. */ readonly processId: string,
    /** The system error code (`ENOSPC`, `EIO`, ...), or `UNKNOWN` when the failure carried none. */ readonly errno: string,
    /** What the log was doing. */ readonly operation: LogWriteOperation,
  ) {
    super(`output log of process ${processId} failed to ${IN_WORDS[operation]}: ${errno}`);
  }
}

/**
 * Reading a process's output log failed with a system error (`EIO`, `EMFILE`, ...). A damaged record is
 * not this error: a reader gets a `truncated` marker for it and goes on. The message carries no path.
 */
export class OutputLogReadError extends ExecClientError {
  readonly code = 'LOG_READ_FAILED';
  constructor(
    /** The process whose log could not be read. */ readonly processId: string,
    /** The system error code, or `UNKNOWN`. */ readonly errno: string,
  ) {
    super(`output log of process ${processId} could not be read: ${errno}`);
  }
}
