/**
 * Every error exec-rx raises is an {@link ExecClientError} with a stable string `code`.
 * Messages carry their context (method, url, timeout, process id); secrets never appear in them.
 */

import type { ExecClientErrorCode } from './codes';

/** Base class of every error exec-rx raises. `name` is the subclass name. */
export abstract class ExecClientError extends Error {
  /** The stable code of the error's kind: switch on it (not on the class or the message). */
  abstract readonly code: ExecClientErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
