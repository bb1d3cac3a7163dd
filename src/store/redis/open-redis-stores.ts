/**
 * Opens what a host replica keeps in Redis (`exec-rx host --redis-url-file`): the state store (clock
 * epochs: they only grow even when Redis restarts empty) and the log store, each on its own connection,
 * the download tickets (on the state's connection), and the cluster's id. The only place the command line
 * reaches the Redis client from, and only in that mode.
 */
import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import type { SharedStateStore } from '../cluster-state';
import { DEFAULT_PREFIX } from './redis-keys';
import { RedisLogStore } from './redis-log-store';
import { RedisStateStore } from './redis-state-store';
import { RedisTicketStore } from './redis-ticket-store';

/** How long one state command may go unanswered (a paused or unreachable Redis): past it, it rejects (an upgrade then gets 503). */
const STATE_COMMAND_TIMEOUT_MS = 3_000;

/** What a replica keeps in Redis. */
export interface SharedStores {
  /** The cluster's id (the operator API's instance header on every replica). */
  readonly clusterId: string;
  /** Registrations, sessions, owners and epochs, keyed starts, stdin records, the made token's digest. */
  readonly state: SharedStateStore;
  /** Every process's output, one stream per process. The host closes it. */
  readonly logs: RedisLogStore;
  /** The operator API's download tickets (`HostServerOptions.tickets`): one made on any replica opens the log on every one. */
  readonly tickets: RedisTicketStore;
  /** Closes the state and ticket stores and quits both connections (after the host closed the log store). Never rejects. */
  close(): Promise<void>;
}

/** Options of {@link openRedisStores}. */
export interface RedisStoresOptions {
  /** `redis://[:PASSWORD@]HOST:PORT[/DB]` or `rediss://…`; never logged. */
  readonly url: string;
  /** The start of every key. @default 'exec-rx' */
  readonly prefix?: string;
  /** Where connection trouble is said (never the url). */
  readonly log: (line: string) => void;
}

/** Opens the stores (see the module's doc). Rejects when Redis does not answer within the connect timeout. */
export async function openRedisStores(options: RedisStoresOptions): Promise<SharedStores> {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const connect = { lazyConnect: true, connectTimeout: 5_000, enableAutoPipelining: false };
  const stateRedis = new Redis(options.url, { ...connect, commandTimeout: STATE_COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 2 });
  const logRedis = new Redis(options.url, { ...connect, maxRetriesPerRequest: null });
  let said = false;
  for (const connection of [stateRedis, logRedis]) {
    connection.on('error', (error: Error) => {
      if (!said) options.log(`warning: Redis: ${error.message} (reconnecting)`);
      said = true;
    });
    connection.on('ready', () => (said = false));
  }
  try {
    await Promise.all([stateRedis.connect(), logRedis.connect()]);
    const clusterId = clusterIdOf(options.url, prefix);
    const state = await RedisStateStore.open({ redis: stateRedis, prefix, epochs: 'clock' });
    const logs = await RedisLogStore.open({ redis: logRedis, prefix });
    const tickets = new RedisTicketStore({ redis: stateRedis, prefix });
    return {
      clusterId,
      state,
      logs,
      tickets,
      close: async () => {
        await Promise.all([state.close(), tickets.close()]);
        stateRedis.disconnect();
        logRedis.disconnect();
      },
    };
  } catch (error: unknown) {
    stateRedis.disconnect();
    logRedis.disconnect();
    throw error;
  }
}

/**
 * The cluster's id: a digest of where its keys are (the Redis endpoint without credentials, its database,
 * the prefix). Every replica of the cluster derives the same one, and it survives Redis losing its data.
 */
export function clusterIdOf(url: string, prefix: string): string {
  let where = url;
  try {
    const parsed = new URL(url);
    where = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    // An unparsable url fails to connect anyway; its digest names nothing.
  }
  return `cluster-${createHash('sha256').update(`${where}\u0000${prefix}`).digest('hex').slice(0, 24)}`;
}
