/**
 * The starts the operator API sent and the executor has not answered yet. Between the two, a process's
 * log (with its argv) is in the log store already, but its environment does not list it: it is neither
 * running nor `unknown` (what a stored process no executor lists is shown as). The lists leave such a
 * process out, and a call that names it waits for its start (see `./process-targets`).
 */

interface InFlight {
  readonly environmentId: string;
  readonly settled: Promise<void>;
}

/** The starts in flight on this host, by process id (a host-generated UUID). */
export class StartsInFlight {
  private readonly starts = new Map<string, InFlight>();

  /** Whether the start of `processId` is in flight. */
  has(processId: string): boolean {
    return this.starts.has(processId);
  }

  /**
   * Resolves `true` once the start of `processId` in `environmentId` that was in flight settled (it
   * started, or failed), `false` at once when none is. Never rejects.
   */
  async settled(environmentId: string, processId: string): Promise<boolean> {
    const start = this.starts.get(processId);
    if (start === undefined || start.environmentId !== environmentId) return false;
    await start.settled;
    return true;
  }

  /** Runs `start` as the start of `processId` in flight until it settles; resolves or rejects as it does. */
  async track<T>(environmentId: string, processId: string, start: () => Promise<T>): Promise<T> {
    let settle = (): void => undefined;
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    this.starts.set(processId, { environmentId, settled });
    try {
      return await start();
    } finally {
      this.starts.delete(processId);
      settle();
    }
  }
}
