/**
 * The ticket port (`store/ticket-store`) in one host's memory: the download tickets of a host without a
 * shared store, kept while that host process lives (a restarted host knows none). Each record is forgotten
 * by a timer on the host's scheduler when its time is up, so a spec on virtual time sees tickets expire at
 * their instant; `close()` cancels every timer.
 *
 * It is `LogTickets`' default, so it lives beside it rather than in `store/memory/`: no module of `host/`
 * but `host-server.ts` may import a store adapter (`.dependency-cruiser.js`, host-through-the-ports), and
 * the operator API makes its tickets' store itself when it is given none.
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { ClosedError } from '../../errors';
import type { TicketRecord, TicketStore } from '../../store/ticket-store';
import { checkTicketPut } from '../../store/ticket-store';

/** One kept record and the timer that forgets it. */
interface Kept {
  readonly record: TicketRecord;
  readonly expiry: Subscription;
}

/**
 * Download tickets in memory (see the module's doc). Every call settles at once; `take` hands out the very
 * record `put` was given. Its owner closes it (`LogTickets` closes the one it made).
 */
export class MemoryTicketStore implements TicketStore {
  private readonly kept = new Map<string, Kept>();
  private closed = false;

  /** @param scheduler the clock of the expiry timers (the host's). @default asyncScheduler */
  constructor(private readonly scheduler: SchedulerLike = asyncScheduler) {}

  /** How many records are kept now (bookkeeping: an expired one is gone at its instant). */
  get size(): number {
    return this.kept.size;
  }

  put(digest: string, record: TicketRecord, ttlMs: number): Promise<void> {
    return this.run(() => {
      checkTicketPut(digest, ttlMs);
      this.drop(digest);
      const expiry = this.scheduler.schedule(() => void this.kept.delete(digest), ttlMs);
      this.kept.set(digest, { record, expiry });
    });
  }

  take(digest: string): Promise<TicketRecord | undefined> {
    return this.run(() => this.drop(digest));
  }

  /** Forgets every record and cancels its timer; later calls reject with ClosedError. Idempotent. */
  close(): void {
    this.closed = true;
    for (const digest of [...this.kept.keys()]) this.drop(digest);
  }

  /** Forgets `digest`'s record (its timer cancelled) and returns it. */
  private drop(digest: string): TicketRecord | undefined {
    const found = this.kept.get(digest);
    if (found === undefined) return undefined;
    found.expiry.unsubscribe();
    this.kept.delete(digest);
    return found.record;
  }

  private run<T>(task: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError('the download tickets are closed'));
    try {
      return Promise.resolve(task());
    } catch (error: unknown) {
      return Promise.reject(error);
    }
  }
}
