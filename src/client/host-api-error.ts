import type { ExecClientErrorCode } from '../errors';
import { ExecClientError } from '../errors';

/**
 * A request to a host's operator API failed (`exec-rx/client`): the problem+json `code` the host
 * answered (one of the library's codes, or the API's own), `PROCESS_GONE` when the host restarted and
 * no longer knows the process, or `HOST_UNREACHABLE` when it stayed unreachable too long. `status` is
 * the HTTP status when there was an answer; `hostInstance` names the host that answered; `detail` is
 * the problem's own explanation.
 */
export class HostApiError extends ExecClientError {
  constructor(
    /** The problem's code (the library's, or the operator API's own). */
    readonly code: ExecClientErrorCode,
    message: string,
    /** The HTTP status, when the host answered. */
    readonly status: number | undefined,
    /** The host instance that answered (`exec-rx-host-instance`), when known. */
    readonly hostInstance: string | undefined,
    options?: { readonly cause?: unknown; readonly detail?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.detail = options?.detail;
  }

  /** The problem's `detail` as the host wrote it (what a UI shows), when its answer had one. */
  readonly detail: string | undefined;
}
