/**
 * Download tickets for a process's output bytes (`GET …/log`): a browser downloads a file by navigating
 * to a url, and a navigation carries no `Authorization` header. So the page asks for a ticket
 * (`POST …/log/tickets`, with its token) and navigates to `…/log?ticket=T`.
 *
 * A ticket is 256 random bits (base64url), never the token nor derived from it; it is good once, for
 * {@link TICKET_TTL_MS} (the timer runs on the host's scheduler), for that one process's log, and it
 * stands for the caller that asked (its name, role and environments): the download is that caller's
 * request. A reload that revokes the caller's token drops its tickets. Tickets are kept in memory only
 * (a restarted host knows none) and never reach a log, an error or an answer other than the one that made it.
 */
import { randomBytes } from 'node:crypto';
import type { SchedulerLike, Subscription } from 'rxjs';
import type { OperatorCaller } from './operator-tokens';

/** How long a ticket is good for. */
export const TICKET_TTL_MS = 60_000;

/** The query parameter that carries a ticket. */
export const TICKET_PARAM = 'ticket';

/** What a ticket was made for. */
interface Ticket {
  readonly caller: OperatorCaller;
  readonly environmentId: string;
  readonly processId: string;
  readonly expiry: Subscription;
}

/** A ticket just made: the ticket and when it expires (ms since the epoch, on the host's clock). */
export interface IssuedTicket {
  readonly ticket: string;
  readonly expiresAt: number;
}

/** The host's open download tickets. */
export class LogTickets {
  private readonly open = new Map<string, Ticket>();

  constructor(private readonly scheduler: SchedulerLike) {}

  /** Open tickets (bookkeeping). */
  get size(): number {
    return this.open.size;
  }

  /** A new ticket for `caller` to download the log of `processId` of `environmentId` once, within {@link TICKET_TTL_MS}. */
  issue(caller: OperatorCaller, environmentId: string, processId: string): IssuedTicket {
    const ticket = randomBytes(32).toString('base64url');
    const expiry = this.scheduler.schedule(() => void this.open.delete(ticket), TICKET_TTL_MS);
    this.open.set(ticket, { caller, environmentId, processId, expiry });
    return { ticket, expiresAt: this.scheduler.now() + TICKET_TTL_MS };
  }

  /**
   * The caller a ticket stands for, when `ticket` is open and was made for this process; it is used up
   * either way (a ticket tried on another process is gone too). `undefined` for a used, expired or unknown one.
   */
  redeem(ticket: string, environmentId: string, processId: string): OperatorCaller | undefined {
    const found = this.open.get(ticket);
    if (found === undefined) return undefined;
    this.drop(ticket, found);
    return found.environmentId === environmentId && found.processId === processId ? found.caller : undefined;
  }

  /** Drops the tickets of the callers named `names` (a reload revoked their tokens). */
  revoke(names: ReadonlySet<string>): void {
    for (const [ticket, found] of this.open) if (names.has(found.caller.name)) this.drop(ticket, found);
  }

  /** Drops every ticket (the host stops). */
  close(): void {
    for (const [ticket, found] of this.open) this.drop(ticket, found);
  }

  private drop(ticket: string, found: Ticket): void {
    found.expiry.unsubscribe();
    this.open.delete(ticket);
  }
}
