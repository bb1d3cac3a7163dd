/**
 * `exec-rx host --redis-url-file FILE` (or EXEC_RX_REDIS_URL): the Redis every replica shares. The url is
 * read from the file (its first line) or the environment, never from a flag, where `ps` would show its
 * password; it is never logged (only its host and port are). The Redis client is loaded only here, in
 * this mode: a single host never loads it.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors';
import type * as RedisStores from '../store/redis/open-redis-stores';
import type { HostServerOptions } from '../host/host-options';
import type { ForwardingOptions } from '../host/cluster/cluster-options';
import { loadReplicaKeys } from '../host/api/replica-keys';
import type { SharedStores } from '../store/redis/open-redis-stores';

/** The environment variable the url may come from instead of a file. */
export const REDIS_URL_ENV = 'EXEC_RX_REDIS_URL';

/**
 * The Redis url of `--redis-url-file` or EXEC_RX_REDIS_URL; undefined when neither names one (a single
 * host). Throws a ConfigError for an unreadable file or a url that is not redis:// or rediss://.
 */
export function redisUrlOf(file: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  let url: string | undefined;
  if (file !== undefined) {
    try {
      url = readFileSync(file, 'utf8').split('\n')[0]?.trim();
    } catch (error: unknown) {
      throw new ConfigError(`cannot read the Redis url from ${file}`, { cause: error });
    }
    if (url === undefined || url === '') throw new ConfigError(`${file} holds no Redis url`);
  } else {
    url = env[REDIS_URL_ENV]?.trim();
    if (url === '') url = undefined;
  }
  const where = file === undefined ? ` of ${REDIS_URL_ENV}` : ` in ${file}`;
  if (url !== undefined && !/^rediss?:\/\//.test(url)) throw new ConfigError(`the Redis url${where} must start with redis:// or rediss://`);
  return url;
}

/** Where a Redis url points, without its password or user: what a log line may say. */
export function redisEndpointOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'redis (unparsable url)';
  }
}

/** Opens the shared stores on `url` (loading the Redis client now). Rejects with a ConfigError when Redis does not answer. */
export async function openSharedStores(url: string, prefix: string | undefined, log: (line: string) => void): Promise<SharedStores> {
  // Loaded here, on first use, so that a single host never loads the Redis client (a CommonJS require: the
  // build is CommonJS, where `import()` stays a real ESM import that jest's VM cannot run).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { openRedisStores } = require('../store/redis/open-redis-stores') as typeof RedisStores;
  const endpoint = redisEndpointOf(url);
  try {
    const stores = await openRedisStores({ url, ...(prefix === undefined ? {} : { prefix }), log });
    log(`replica of cluster ${stores.clusterId} on ${endpoint} (keys ${prefix ?? 'exec-rx'}:*)`);
    return stores;
  } catch (error: unknown) {
    throw new ConfigError(`cannot use Redis at ${endpoint}`, { cause: error });
  }
}

/**
 * The host's options of a replica on `shared`: its cluster (state, id, the logs' rewrite after a loss, and
 * the forwarding of owner-only calls when `forwarding` is given), its log store and its download tickets.
 */
export function replicaOptions(shared: SharedStores, forwarding?: ForwardingOptions): Pick<HostServerOptions, 'cluster' | 'logStore' | 'tickets'> {
  const cluster = { state: shared.state, id: shared.clusterId, rewriteLogs: (owned: ReadonlyMap<string, number>) => shared.logs.rewrite(owned) };
  return { cluster: forwarding === undefined ? cluster : { ...cluster, forwarding }, logStore: shared.logs, tickets: shared.tickets };
}

/**
 * The forwarding options of `--replica-key-file` (undefined without it), `--internal-url` and
 * `--internal-ca`: the keys read and checked, the CA read. Says how many keys and the signing key's
 * digest (never a key). Throws a ConfigError for an unreadable file or keys that do not fit.
 */
export function forwardingOptions(
  keyFile: string | undefined,
  internalUrl: string | undefined,
  internalCa: string | undefined,
  log: (line: string) => void,
): ForwardingOptions | undefined {
  if (keyFile === undefined) return undefined;
  const loaded = loadReplicaKeys(keyFile);
  if (loaded.warning !== undefined) log(`warning: ${loaded.warning}`);
  let ca: Buffer | undefined;
  if (internalCa !== undefined) {
    try {
      ca = readFileSync(internalCa);
    } catch (error: unknown) {
      throw new ConfigError(`cannot read the internal CA ${internalCa}`, { cause: error });
    }
  }
  log(`forwarding owner-only calls between replicas: ${loaded.keys.size} replica key(s) from ${keyFile}, signing with ${loaded.keys.signingDigest}`);
  return { keys: loaded.keys, ...(internalUrl === undefined ? {} : { internalUrl }), ...(ca === undefined ? {} : { ca }) };
}
