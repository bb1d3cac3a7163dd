/**
 * Plain value types that the library (`exec-rx`) and the operator API's client (`exec-rx/client`) share,
 * so that one name means one shape in every entry point (docs/api-conventions.md). Types only: nothing
 * here runs.
 */

/** The options argument of every call that waits and can be cancelled, in the library and in the client. */
export interface AbortOptions {
  /**
   * Cancels the wait: an abort rejects the call with `signal.reason` itself (a DOMException named
   * `AbortError` after `controller.abort()`, `x` after `controller.abort(x)`); an already-aborted
   * signal rejects at once, with nothing sent. What was already sent is not undone: each call says
   * what stays done.
   * @default none (the call cannot be cancelled)
   */
  readonly signal?: AbortSignal;
}

/** A terminal size in character cells. */
export interface TtySize {
  /** Lines, 1 to 10000. */
  readonly rows: number;
  /** Columns, 1 to 10000. */
  readonly cols: number;
}
