/** The error of a command line that cannot be run, and the adapter from node's `parseArgs` errors to it. */

/** A command line that cannot be run; the message is shown to the user as is (it never holds a token). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Runs a parser, turning its error into a {@link UsageError} (first line of the message only). */
export function asUsage<T>(parser: () => T): T {
  try {
    return parser();
  } catch (error: unknown) {
    // Not `instanceof Error`: node's own errors come from another realm under jest.
    const message = typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string' ? error.message : '';
    throw new UsageError(message.split('\n')[0] || 'bad arguments');
  }
}
