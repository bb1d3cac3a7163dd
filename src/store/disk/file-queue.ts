/**
 * The changes of each file of a data dir, one at a time and in the order they were made: two writes of a
 * file never share its temp file, and a later change never lands under an earlier one.
 */

/** Changes queued per file (see the module's doc). */
export class FileQueue {
  private readonly pending = new Map<string, Promise<void>>();

  /** Runs `change` on `path` after the changes queued before it (a failed one does not stop it); settles as it does. */
  run(path: string, change: () => Promise<void>): Promise<void> {
    const next = (this.pending.get(path) ?? Promise.resolve()).catch(() => undefined).then(change);
    this.pending.set(path, next);
    const done = (): void => {
      if (this.pending.get(path) === next) this.pending.delete(path);
    };
    next.then(done, done);
    return next;
  }

  /** The latest change queued for `path`, settled (at once when none is). Never rejects. */
  latest(path: string): Promise<void> {
    return (this.pending.get(path) ?? Promise.resolve()).catch(() => undefined);
  }

  /** Resolves once every change queued so far settled. Never rejects. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending.values()].map((change) => change.catch(() => undefined)));
  }
}
