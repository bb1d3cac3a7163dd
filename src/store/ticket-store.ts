/**
 * The port of the operator API's download tickets (`POST …/log/tickets`, then `GET …/log?ticket=T`):
 * where a host keeps what each open ticket stands for until it is used or expires. One host keeps them in
 * its memory (the operator API's default, beside it: `host/api/memory-ticket-store`); replicas share them
 * (`store/redis`), so a ticket made on one replica opens the log on any of them.
 *
 * A store never sees a ticket: it keeps each record under the ticket's digest (the hex SHA-256 of the
 * ticket, `TICKET_DIGEST`), for the time it is given, and hands it out once ({@link TicketStore.take}
 * is atomic: of two replicas taking one digest at once, one gets the record). Nor a token: the record
 * names the caller (name, role, environments) and may carry an opaque seal of its token that only the
 * ticket opens (see `OperatorTokens.tokenSeal`), so what a store holds lets nobody download anything.
 */

/** What a ticket's digest looks like: the 64 lowercase hex digits of a SHA-256. */
export const TICKET_DIGEST = /^[0-9a-f]{64}$/;

/** Who a ticket stands for, as a store keeps it: the operator token's name, role and environments (never the token). */
export interface TicketCaller {
  /** The token's name. */
  readonly name: string;
  /** What it may do. */
  readonly role: 'view' | 'operate';
  /** The environments it may touch; `undefined`: every one. */
  readonly environments: ReadonlySet<string> | undefined;
}

/** What one open ticket stands for (kept under the ticket's digest, never beside the ticket). */
export interface TicketRecord {
  /** The caller that asked for it: the download is that caller's request. */
  readonly caller: TicketCaller;
  /** The environment of the process whose log it opens. */
  readonly environmentId: string;
  /** The process whose log it opens (and no other). */
  readonly processId: string;
  /**
   * A seal of the caller's token that only the ticket opens (hex; see `OperatorTokens.tokenSeal`): the
   * host that redeems the ticket checks with it that it still accepts that very token. Absent: the ticket
   * was made without tokens to check against (a host's own unit use).
   */
  readonly tokenSeal?: string;
  /** When it expires (ms since the epoch, on the clock of the host that made it): what the ticket's answer says. */
  readonly expiresAt: number;
}

/**
 * Where a host keeps its open download tickets (see the module's doc). Every call is asynchronous (a shared
 * store answers over the network) and rejects with the store's error: StoreUnavailableError when a shared
 * store does not answer (the operator API answers 503), ClosedError once its owner closed it. The store's
 * owner closes it, after the hosts that use it: a host closes only the store it made itself.
 */
export interface TicketStore {
  /**
   * Keeps `record` under `digest` (a `TICKET_DIGEST`) for `ttlMs` (a whole number of ms > 0), past
   * which the store forgets it by itself. Resolves once kept (a `take` after it, by any host on the store,
   * finds it). Rejects with a TypeError for a malformed digest or ttl.
   */
  put(digest: string, record: TicketRecord, ttlMs: number): Promise<void>;
  /**
   * Takes the record kept under `digest` and forgets it, in one step: of several takes of one digest,
   * whatever hosts they come from, one resolves with the record, the others with `undefined`. Resolves
   * `undefined` for a digest never kept, taken already, or expired.
   */
  take(digest: string): Promise<TicketRecord | undefined>;
}

/** Throws a TypeError unless `digest` is a `TICKET_DIGEST` and `ttlMs` a whole number of ms > 0 (what {@link TicketStore.put} takes). */
export function checkTicketPut(digest: string, ttlMs: number): void {
  if (!TICKET_DIGEST.test(digest)) throw new TypeError('a ticket digest is the 64 lowercase hex digits of a SHA-256');
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new TypeError(`a ticket lasts a whole number of ms > 0, not ${String(ttlMs)}`);
}
