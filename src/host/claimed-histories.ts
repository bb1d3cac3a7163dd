/**
 * The history factory of a generation whose epoch is not known when its manager is built: a host claims
 * an environment only once the executor answered `initialize` on the socket (see `SessionAdmission`),
 * which is after the manager (and its `outputHistory` option) is made, and before any process is.
 */
import { ClosedError } from '../errors';
import type { HistoryFactory } from '../exec/output-history';

/** One generation's histories, made at the epoch its claim gives (see the module's doc). */
export class ClaimedHistories {
  private claimed: { readonly epoch: number; readonly histories: HistoryFactory } | undefined;

  constructor(
    /** The environment (named in the error of a process made before the claim). */ private readonly environmentId: string,
    /** The store's history factory, written at `epoch`. */ private readonly historiesAt: (epoch: number) => HistoryFactory,
  ) {}

  /** The epoch claimed, once it was (0 before). */
  get epoch(): number {
    return this.claimed?.epoch ?? 0;
  }

  /** The claim gave `epoch`: histories are written at it from now on. */
  claim(epoch: number): void {
    this.claimed = { epoch, histories: this.historiesAt(epoch) };
  }

  /** The factory to build the manager with; it throws ClosedError (nothing is sent) for a process made before the claim. */
  readonly factory: HistoryFactory = (processId, launch) => {
    if (this.claimed === undefined) throw new ClosedError(`environment ${this.environmentId} is not claimed yet`);
    return this.claimed.histories(processId, launch);
  };
}
