/** `exec-rx host`'s replica flags, checked (`--redis-url-file`, `--redis-prefix`, the forwarding flags, what they exclude), and the fleet's handshake burst. */
import { isLoopbackHost } from '../host/host-http';
import { UsageError } from './usage-error';

/**
 * Why `--local-executor` does not go with `--redis-url-file`: a local executor is one replica's child (it
 * dials that replica's own url and stops with it), while with Redis every executor dials the load
 * balancer and belongs to the cluster.
 */
export const LOCAL_WITH_REDIS =
  '--local-executor does not go with a Redis url: a local executor belongs to one host, while replicas serve executors that dial the ' +
  'load balancer; start executors on their own machines with the join command';

/** Checks the replica flags; returns the prefix. Throws a UsageError naming the flag. */
export function checkRedisFlags(urlFile: string | undefined, prefix: string | undefined, localExecutor: boolean): string | undefined {
  if (urlFile !== undefined && localExecutor) throw new UsageError(LOCAL_WITH_REDIS);
  if (prefix !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(prefix)) throw new UsageError('--redis-prefix expects 1 to 64 of A-Z a-z 0-9 . _ -');
  return prefix;
}

/**
 * The handshake burst of `--max-handshakes-per-second N`: a fleet re-dialling at once (after a replica
 * went) comes in one wave, so the burst is two seconds of the rate, at least the default 20; undefined
 * (the host's default) without the flag.
 */
export const fleetBurst = (rate: number | undefined): number | undefined => (rate === undefined ? undefined : Math.max(20, 2 * rate));

/**
 * Checks the forwarding flags: each needs `--redis-url-file` (forwarding is between replicas),
 * `--internal-url` and `--internal-ca` need `--replica-key-file`, and the url is http(s)://host[:port]
 * with no path, https off loopback. Throws a UsageError naming the flag.
 */
export function checkForwardingFlags(urlFile: string | undefined, keyFile: string | undefined, internalUrl: string | undefined, internalCa: string | undefined): void {
  if (keyFile !== undefined && urlFile === undefined) throw new UsageError('--replica-key-file goes with --redis-url-file (forwarding is between replicas)');
  if (internalUrl !== undefined && keyFile === undefined) throw new UsageError('--internal-url goes with --replica-key-file');
  if (internalCa !== undefined && keyFile === undefined) throw new UsageError('--internal-ca goes with --replica-key-file');
  if (internalUrl === undefined) return;
  let url: URL;
  try {
    url = new URL(internalUrl);
  } catch {
    throw new UsageError(`--internal-url expects http(s)://HOST[:PORT], not ${internalUrl}`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.pathname !== '/' || url.search !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError(`--internal-url expects http(s)://HOST[:PORT], not ${internalUrl}`);
  }
  // Forwarded calls carry an identity and a stdin body: in the clear only on loopback.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname.replace(/^\[|\]$/g, ''))) {
    throw new UsageError(`--internal-url is https off loopback (forwarded calls carry an operator's identity), not ${internalUrl}`);
  }
}
