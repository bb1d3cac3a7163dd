/**
 * The ticket port on Redis (issue 39): download tickets every replica on one Redis shares, so a ticket made
 * (`POST …/log/tickets`) on one replica opens the log (`GET …/log?ticket=T`) on any of them. Each record is
 * one STRING, `<prefix>:{global}:ticket:<digest>` (`./redis-keys`), its JSON written with `SET … PX ttl`
 * (Redis forgets it when its time is up: no timer here) and taken with `GETDEL` (Redis 6.2 and later), which
 * reads and deletes in one step, so a ticket opens one download across all replicas.
 *
 * Never a ticket (the key holds its SHA-256, the port gives nothing else) nor a token (the record names the
 * caller and carries at most an opaque seal of its token, see `../ticket-store`). A record that does not
 * read back whole counts as absent: the ticket is refused, as a used one is.
 */
import { isRight } from 'fp-ts/Either';
import * as t from 'io-ts';
import { CallerJson, callerJsonOf, callerOfJson } from '../../wire/caller-identity';
import { Integer } from '../../wire/integer';
import { struct } from '../../wire/struct';
import type { TicketRecord, TicketStore } from '../ticket-store';
import { checkTicketPut, TICKET_DIGEST } from '../ticket-store';
import * as keys from './redis-keys';
import { RedisCalls } from './redis-calls';
import type { RedisClient } from './redis-scripts';

/** Options of {@link RedisTicketStore}. */
export interface RedisTicketStoreOptions {
  /**
   * The connection of its commands (the caller's: it quits it after `close()`). Give it a command timeout:
   * a download waits for the answer (past it the call rejects, and the download gets 503).
   */
  readonly redis: RedisClient;
  /** What every key starts with (several stores, or tests, share one Redis apart). @default 'exec-rx' */
  readonly prefix?: string;
}

/** A record as its JSON holds it: the caller as `CallerJson`, the seal when there is one. */
const TicketJson = struct(
  'TicketJson',
  { caller: CallerJson, environmentId: t.string, processId: t.string, expiresAt: t.refinement(Integer, Number.isSafeInteger, 'SafeInteger') },
  { tokenSeal: t.string },
);

const jsonOf = (record: TicketRecord): t.OutputOf<typeof TicketJson> => {
  const { caller, environmentId, processId, tokenSeal, expiresAt } = record;
  return { caller: callerJsonOf(caller), environmentId, processId, ...(tokenSeal === undefined ? {} : { tokenSeal }), expiresAt };
};

/** A record's JSON read back, or undefined when any part is missing or wrong. */
export function ticketRecordOf(json: string | null): TicketRecord | undefined {
  if (json === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const decoded = TicketJson.decode(value);
  if (!isRight(decoded)) return undefined;
  const { caller, environmentId, processId, tokenSeal, expiresAt } = decoded.right;
  return { caller: callerOfJson(caller), environmentId, processId, expiresAt, ...(tokenSeal === undefined ? {} : { tokenSeal }) };
}

/**
 * Download tickets on Redis (see the module's doc). Each call is one command: `put` resolves once Redis
 * kept the record, `take` with what `GETDEL` answered; Redis's own failures reject as
 * StoreUnavailableError, every call after `close()` as ClosedError. Its owner closes it (after the hosts
 * that use it), then lets the connection go.
 */
export class RedisTicketStore implements TicketStore {
  private readonly redis: RedisClient;
  private readonly prefix: string;
  private readonly calls = new RedisCalls('the download tickets are closed');

  /** A store on `options.redis` under `options.prefix`. Throws a TypeError for a prefix holding `{` or `}`. */
  constructor(options: RedisTicketStoreOptions) {
    this.redis = options.redis;
    this.prefix = keys.checkPrefix(options.prefix ?? keys.DEFAULT_PREFIX);
  }

  put(digest: string, record: TicketRecord, ttlMs: number): Promise<void> {
    return this.run(async () => {
      checkTicketPut(digest, ttlMs);
      await this.redis.set(keys.ticketKey(this.prefix, digest), JSON.stringify(jsonOf(record)), 'PX', ttlMs);
    });
  }

  take(digest: string): Promise<TicketRecord | undefined> {
    // A malformed digest was never kept: nothing to ask Redis.
    if (!TICKET_DIGEST.test(digest)) return this.run(() => Promise.resolve(undefined));
    return this.run(async () => ticketRecordOf(await this.redis.getdel(keys.ticketKey(this.prefix, digest))));
  }

  /** Waits for the calls made so far, then refuses every later one (ClosedError); the connection stays the caller's. Idempotent; never rejects. */
  close(): Promise<void> {
    return this.calls.close();
  }

  private run<T>(task: () => Promise<T>): Promise<T> {
    return this.calls.run(task);
  }
}
