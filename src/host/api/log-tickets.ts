/**
 * Download tickets for a process's output bytes (`GET …/log`): a browser downloads a file by navigating
 * to a url, and a navigation carries no `Authorization` header. So the page asks for a ticket
 * (`POST …/log/tickets`, with its token) and navigates to `…/log?ticket=T`.
 *
 * A ticket is 256 random bits (base64url), never the token nor derived from it; it is good once, for
 * {@link TICKET_TTL_MS}, for that one process's log (tried on another process it is used up too), and it
 * stands for the caller that asked (its name, role and environments): the download is that caller's
 * request. Tickets live in a ticket store (`store/ticket-store`): one host's memory by default (its timers on
 * the host's scheduler; a restarted host knows none), or, with replicas, the store they share (Redis), so a
 * ticket made on one replica opens the log on any of them, once. The store keeps a ticket's SHA-256 only,
 * never the ticket, and never a token: each record carries a seal of the caller's token keyed by the ticket
 * (`./token-seal`), and the host that redeems a ticket checks it against the tokens it accepts now. So a
 * reload that revokes the caller's token makes its tickets fail on every replica (those of this host are
 * also taken out of the store at once). A ticket never reaches a log, an error or an answer other than the
 * one that made it.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SchedulerLike } from 'rxjs';
import { ClosedError } from '../../errors';
import type { TicketRecord, TicketStore } from '../../store/ticket-store';
import { MemoryTicketStore } from './memory-ticket-store';
import type { OperatorCaller, OperatorTokens } from './operator-tokens';

/** How long a ticket is good for. */
export const TICKET_TTL_MS = 60_000;

/** The query parameter that carries a ticket. */
export const TICKET_PARAM = 'ticket';

/** What a ticket looks like: 256 bits in base64url, no padding. Anything else is never looked up. */
const TICKET = /^[A-Za-z0-9_-]{43}$/;

/** The hex SHA-256 of `ticket`: what a store keeps it under. */
const digestOf = (ticket: string): string => createHash('sha256').update(ticket, 'utf8').digest('hex');

/** A ticket just made: the ticket and when it expires (ms since the epoch, on the host's clock). */
export interface IssuedTicket {
  readonly ticket: string;
  readonly expiresAt: number;
}

/** Options of {@link LogTickets}. */
export interface LogTicketsOptions {
  /**
   * Where the tickets are kept: the store replicas share (its owner closes it, after the host). @default a
   * `MemoryTicketStore` of this host's own (`./memory-ticket-store`), on its scheduler (closed by {@link LogTickets.close})
   */
  readonly store?: TicketStore;
  /**
   * The tokens this host accepts (the operator API's): each ticket carries its caller's token seal, and is
   * redeemed only while these accept that very token. @default none: not checked (a revocation is
   * {@link LogTickets.revoke} alone)
   */
  readonly tokens?: OperatorTokens;
}

/** A ticket this host made and has not seen used: whose it is and when it expires. */
interface Made {
  readonly name: string;
  readonly expiresAt: number;
}

/** The host's download tickets (see the module's doc). Its owner (the operator API) closes it when the host stops. */
export class LogTickets {
  private readonly store: TicketStore;
  private readonly own: MemoryTicketStore | undefined;
  private readonly tokens: OperatorTokens | undefined;
  /** By digest: the tickets this host made, until used here, revoked or expired (pruned as it goes). */
  private readonly made = new Map<string, Made>();
  private closed = false;

  constructor(
    private readonly scheduler: SchedulerLike,
    options: LogTicketsOptions = {},
  ) {
    this.tokens = options.tokens;
    if (options.store !== undefined) {
      this.store = options.store;
      this.own = undefined;
    } else {
      const own = new MemoryTicketStore(scheduler);
      this.store = own;
      this.own = own;
    }
  }

  /** Tickets this host made that it has not seen used, revoked or expire (bookkeeping: one used on another replica counts until it expires). */
  get size(): number {
    const now = this.scheduler.now();
    let open = 0;
    for (const made of this.made.values()) if (made.expiresAt > now) open += 1;
    return open;
  }

  /**
   * A new ticket for `caller` to download the log of `processId` of `environmentId` once, within
   * {@link TICKET_TTL_MS}. Resolves once the store keeps it (any replica on the store then redeems it);
   * rejects with the store's error (StoreUnavailableError: the shared store does not answer), or
   * ClosedError once closed.
   */
  async issue(caller: OperatorCaller, environmentId: string, processId: string): Promise<IssuedTicket> {
    if (this.closed) throw new ClosedError('the download tickets are closed');
    const ticket = randomBytes(32).toString('base64url');
    const digest = digestOf(ticket);
    const expiresAt = this.scheduler.now() + TICKET_TTL_MS;
    // No seal when a reload revoked the caller's token since it was checked: such a ticket is never redeemed.
    const tokenSeal = this.tokens?.tokenSeal(caller, ticket);
    const record: TicketRecord = { caller, environmentId, processId, expiresAt, ...(tokenSeal === undefined ? {} : { tokenSeal }) };
    this.prune();
    // Known before it is kept: a revocation while the store answers takes it out too.
    this.made.set(digest, { name: caller.name, expiresAt });
    try {
      await this.store.put(digest, record, TICKET_TTL_MS);
    } catch (error: unknown) {
      this.made.delete(digest);
      throw error;
    }
    return { ticket, expiresAt };
  }

  /**
   * The caller a ticket stands for, when `ticket` is open, was made for this process, and (with tokens) its
   * caller's token is still accepted here; it is used up either way (a ticket tried on another process is
   * gone too). Resolves `undefined` for a used, expired, unknown or revoked one, and once closed; rejects
   * with the store's error (StoreUnavailableError: the download gets 503).
   */
  async redeem(ticket: string, environmentId: string, processId: string): Promise<OperatorCaller | undefined> {
    if (this.closed || !TICKET.test(ticket)) return undefined;
    const digest = digestOf(ticket);
    this.made.delete(digest);
    const record = await this.store.take(digest);
    if (record === undefined || record.environmentId !== environmentId || record.processId !== processId) return undefined;
    return this.accepts(record, ticket) ? record.caller : undefined;
  }

  /**
   * Takes the tickets this host made for the callers named `names` out of the store (a reload revoked their
   * tokens); those made elsewhere fail on their seal wherever they are tried. Resolves once the store
   * answered; never rejects (a ticket the store kept fails on its seal all the same).
   */
  async revoke(names: ReadonlySet<string>): Promise<void> {
    this.prune();
    const revoked = [...this.made].filter(([, made]) => names.has(made.name)).map(([digest]) => digest);
    for (const digest of revoked) this.made.delete(digest);
    await Promise.allSettled(revoked.map((digest) => this.store.take(digest)));
  }

  /**
   * Stops issuing and redeeming (the host stops): every ticket of its own memory store goes (its timers
   * with it); a shared store keeps them, for the other replicas. Idempotent.
   */
  close(): void {
    this.closed = true;
    this.made.clear();
    this.own?.close();
  }

  /** Whether `record`'s caller is still accepted with the very token that asked (always, without tokens to check). */
  private accepts(record: TicketRecord, ticket: string): boolean {
    if (this.tokens === undefined) return true;
    const expected = this.tokens.tokenSeal(record.caller, ticket);
    if (expected === undefined || record.tokenSeal === undefined) return false;
    const presented = Buffer.from(record.tokenSeal, 'hex');
    const wanted = Buffer.from(expected, 'hex');
    return presented.length === wanted.length && timingSafeEqual(presented, wanted);
  }

  /** Forgets the tickets this host made that expired (the store forgot them by itself). */
  private prune(): void {
    const now = this.scheduler.now();
    for (const [digest, made] of this.made) if (made.expiresAt <= now) this.made.delete(digest);
  }
}
