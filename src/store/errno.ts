/** The code of a store's error, for a log line or a typed error that must not carry a path. */

/** The error's `code` (a Node errno such as `ENOSPC`, or a typed error's code), or `UNKNOWN` when it has none. */
export function errnoOf(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return 'UNKNOWN';
}

/** The errno of a store that could not be reached (a Redis connection down, a refusal with no code of its own). */
export const UNREACHABLE = 'EUNREACHABLE';

/** What passes: the store did not answer in time, its connection dropped, or it is out of handles for now. */
const TRANSIENT: ReadonlySet<string> = new Set([UNREACHABLE, 'ETIMEDOUT', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'EAGAIN', 'EMFILE', 'ENFILE']);

/** Whether a store's failure with `errno` passes (the call may be made again later), as opposed to a damage or a full disk. */
export const isTransientErrno = (errno: string): boolean => TRANSIENT.has(errno);

/** A Redis failure's errno: its own code, else {@link UNREACHABLE} (ioredis's connection errors carry none). */
export function redisErrnoOf(error: unknown): string {
  const errno = errnoOf(error);
  return errno === 'UNKNOWN' ? UNREACHABLE : errno;
}
