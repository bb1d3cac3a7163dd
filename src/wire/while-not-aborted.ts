/**
 * The one promise-level cancellation helper, shared by the library (`rpc/abort` re-exports it) and the
 * operator API's client (which may import only `wire/` and `errors/`): no dependency, nothing Node-only.
 */

/**
 * Runs `run()` unless `signal` has already aborted (then rejects at once with `signal.reason`, and
 * `run` is never called); rejects with `signal.reason` when it aborts before `run()`'s promise settles,
 * else settles as that promise does. It does not stop what `run` started: pass the signal down to the
 * calls `run` makes so they stop too. A signal without a reason (an old polyfill) rejects with a
 * DOMException named `AbortError`.
 */
export function whileNotAborted<T>(signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
  if (signal === undefined) return run();
  const reason = (): unknown => (signal.reason as unknown) ?? new DOMException('This operation was aborted', 'AbortError');
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(reason());
    signal.addEventListener('abort', onAbort, { once: true });
    run().then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
