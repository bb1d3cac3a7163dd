/** The code of a store's error, for a log line or a typed error that must not carry a path. */

/** The error's `code` (a Node errno such as `ENOSPC`, or a typed error's code), or `UNKNOWN` when it has none. */
export function errnoOf(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return 'UNKNOWN';
}
