/**
 * What a replica does before it answers an executor's upgrade as a single host would: 503 while it drains
 * or its leases are in doubt (never 409 or 401, which would make the executor re-register or exit); the
 * environment's latest registration read from the shared store (the load balancer may have sent its
 * registration to another replica) and taken into this replica's table; and a live generation here whose
 * epoch another replica has taken over since let go of, so that the upgrade starts a new generation,
 * which takes the session back from the owner and epoch in the store.
 */
import { CONNECT_PATH, decodeEnvironmentId, parseTarget } from '../host-http';
import type { HostedEnvironments } from '../hosted-environments';
import type { Registrations } from '../registrations';
import type { HostCluster } from './host-cluster';

/** Prepares an upgrade of `url` (see the module's doc): why it gets 503, or undefined. Rejects when the store does not answer. */
export async function prepareUpgrade(cluster: HostCluster, registrations: Registrations, table: HostedEnvironments, url: string | undefined): Promise<string | undefined> {
  const why = cluster.refusal();
  if (why !== undefined) return why;
  const match = CONNECT_PATH.exec(parseTarget(url)?.pathname ?? '');
  const id = decodeEnvironmentId(match?.[1]);
  if (match === null || id === undefined) return undefined;
  const kept = await cluster.options.state.registration(id);
  if (kept !== undefined && kept.registrationId === match[2]) registrations.restore(kept.id, kept.registrationId, kept.accessKeyId, Buffer.from(kept.tokenDigest, 'hex'));
  const epoch = table.epochOf(id);
  if (epoch !== 0 && !(await cluster.ownsNow(id, epoch))) cluster.fence(id, 'its executor came back after another replica adopted it');
  return undefined;
}
