/**
 * The executors' registration (`POST …/direct/register`, docs/protocol.md#registration): a SigV4-signed
 * request that gets back the url the executor dials, carrying a capability token. Anything but 200 makes
 * an executor exit, so the answers are chosen with care: 429 for the rate and 503 for the environment
 * limit (never for an environment the host knows: after a 409 its executor must get in), 401 only for a
 * request that does not belong. Each registration is kept in the state store (its token as a digest)
 * before it is answered, so an executor re-dialling after a restart is let in at once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SchedulerLike } from 'rxjs';
import { errnoOf } from '../store/errno';
import type { PersistedRegistration, StateStore } from '../store/state-store';
import { decodeEnvironmentId, parseTarget, readBody, REGISTER_PATH, safeHostHeader, sendJson } from './host-http';
import type { HostLogger } from './host-logger';
import { DIRECT_TRANSPORT } from './host-options';
import type { HostedEnvironments } from './hosted-environments';
import type { RateLimiter } from './rate-limiter';
import type { IssuedRegistration, Registrations } from './registrations';
import { tokenDigestOf } from './registrations';
import type { SigV4Policy } from './sigv4';
import { verifySigV4 } from './sigv4';

const MAX_REGISTER_BODY_BYTES = 16 * 1024;
const STALE_REGISTRATION_MS = 30_000;
/** How long after answering an environment 409 its re-registration is let past the limits. */
export const RECENT_CONFLICT_MS = 5 * 60_000;

/** What the admission of a registration asks of a replica's cluster (`HostCluster`). Each call rejects when the shared store does not answer. */
export interface ClusterAdmission {
  /** Environment `id`'s latest registration, whichever replica recorded it. */
  registration(id: string): Promise<PersistedRegistration | undefined>;
  /** How many environments the cluster knows: what its limit counts. */
  environmentCount(): Promise<number>;
  /** Evicts one environment no replica serves whose registration is older than `olderThanMs`, cluster-wide: its id, or undefined. */
  evictUnserved(olderThanMs: number): Promise<string | undefined>;
}

/** What a registration is checked against and recorded in. */
export interface RegistrationParts {
  readonly policy: SigV4Policy;
  readonly limiter: RateLimiter;
  readonly registrations: Registrations;
  readonly table: HostedEnvironments;
  readonly state: StateStore;
  readonly log: HostLogger;
  readonly scheduler: SchedulerLike;
  readonly maxEnvironments: number;
  /** When each environment was last answered 409 for a registration of a previous run (bounded). */
  readonly conflicts: ReadonlyMap<string, number>;
  /** The access key id of each environment's latest accepted upgrade. */
  readonly keyIds: Map<string, string>;
  /** The url an executor dials for `issued`, seen from `host`. */
  readonly connectUrl: (host: string, id: string, issued: IssuedRegistration) => string;
  /** Whether the host is stopping (then every registration gets 503; a replica never says so). */
  readonly stopping: () => boolean;
  /** With replicas: the cluster, where the environment limit counts and known environments are found, and where room is made. */
  readonly cluster: ClusterAdmission | undefined;
}

/** Answers one registration request (see the module's doc). Rejects only on an internal error (the caller answers 500). */
export async function register(parts: RegistrationParts, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { log, limiter } = parts;
  const target = parseTarget(req.url);
  const match = target === undefined ? null : REGISTER_PATH.exec(target.pathname);
  if (match === null) return sendJson(res, 404, { error: 'not found' });
  if (req.method !== 'POST') return sendJson(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
  const id = decodeEnvironmentId(match[1]);
  const named = id === undefined ? '' : ` for ${id}`;
  if (parts.stopping()) {
    log.warn({ environmentId: id, status: 503 }, `registration${named}: the host is stopping (503)`);
    return sendJson(res, 503, { error: 'the host is stopping' }, { 'retry-after': '5', connection: 'close' });
  }
  // A known environment is never refused for the rate: after a 409 its executor exits if this fails.
  // It still needs a valid signature below.
  if (!limiter.tryTake() && !(id !== undefined && (await isKnown(parts, id)))) {
    return sendJson(res, 429, { error: 'too many requests' }, { 'retry-after': String(limiter.retryAfterSeconds()) });
  }
  const body = await readBody(req, MAX_REGISTER_BODY_BYTES);
  if (body === undefined) return sendJson(res, 413, { error: 'request too large' }, { connection: 'close' });
  const auth = verifySigV4({ method: 'POST', path: req.url ?? '/', headers: req.headers, body }, parts.policy);
  if (!auth.ok) {
    log.warn({ environmentId: id, status: 401 }, `registration${named}: refused (401, signature ${auth.reason})`);
    return sendJson(res, 401, { error: 'unauthorized' });
  }
  const host = safeHostHeader(req);
  if (id === undefined || host === undefined || !isDirectRequest(body)) return sendJson(res, 400, { error: 'bad registration request' });
  if (!(await admit(parts, id))) {
    log.warn({ environmentId: id, status: 503 }, `registration for ${id}: at the limit of ${parts.maxEnvironments} environments (503)`);
    return sendJson(res, 503, { error: 'too many environments' }, { 'retry-after': '5' });
  }
  const issued = parts.registrations.issue(id, auth.accessKeyId);
  // Kept before the answer (its token as a digest): after a restart the executor's re-dial is let in at
  // once. A failed write costs only that: the restarted host then answers 409 and it registers again.
  await parts.state
    .setRegistration({ id, registrationId: issued.registrationId, accessKeyId: auth.accessKeyId, tokenDigest: tokenDigestOf(issued.token).toString('hex') })
    .catch((error: unknown) => log.error({ environmentId: id }, `registration for ${id}: could not be kept (${errnoOf(error)}); after a restart it re-registers`));
  log.info({ environmentId: id, registrationId: issued.registrationId }, `registration for ${id}: accepted (${issued.registrationId})`);
  sendJson(res, 200, { environment_id: id, transport: DIRECT_TRANSPORT, registration_id: issued.registrationId, url: parts.connectUrl(host, id, issued) });
}

/** Whether a registration for `id` fits, making room by forgetting failed or never-connected environments. */
async function admit(parts: RegistrationParts, id: string): Promise<boolean> {
  const { registrations, table } = parts;
  if (parts.cluster !== undefined) return admitInCluster(parts, parts.cluster, id);
  const registered = registrations.environments();
  const known = new Set([...registered.map(([envId]) => envId), ...table.liveIds()]);
  if (known.has(id) || known.size < parts.maxEnvironments || (await isKnown(parts, id))) return true;
  const failed = new Set(table.failedIds());
  const now = parts.scheduler.now();
  const evictable = registered.find(([envId, issuedAt]) => failed.has(envId) || (table.get(envId) === undefined && now - issuedAt > STALE_REGISTRATION_MS));
  if (evictable === undefined) return false;
  const [gone] = evictable;
  registrations.forget(gone);
  table.remove(gone);
  parts.keyIds.delete(gone);
  parts.state.forget(gone).catch(() => parts.log.error({ environmentId: gone }, `environment ${gone}: could not forget its recorded session`));
  return true;
}

/**
 * With replicas the limit counts the cluster: a registration fits when the environment is known (any
 * replica registered it or recorded its session) or the cluster holds fewer than the limit. The store not
 * answering admits it (a refusal would make the executor exit; the upgrade then waits for the store with
 * 503s). At the limit, room is made as on one host, first of this replica's own failed environments, then
 * cluster-wide: an environment no replica serves (no owner, or its owner's lease ran out) whose
 * registration is older than the stale bound, evicted by whichever replica needs the room (one step in the
 * store per candidate: of replicas evicting at once, each environment goes to one).
 */
async function admitInCluster(parts: RegistrationParts, cluster: ClusterAdmission, id: string): Promise<boolean> {
  try {
    if ((await cluster.registration(id)) !== undefined || (await isKnown(parts, id))) return true;
    if ((await cluster.environmentCount()) < parts.maxEnvironments) return true;
  } catch {
    return true;
  }
  const failed = parts.table.failedIds()[0];
  if (failed !== undefined) {
    forgetHere(parts, failed);
    await parts.state.forget(failed).catch(() => parts.log.error({ environmentId: failed }, `environment ${failed}: could not forget its recorded session`));
    return true;
  }
  const evicted = await cluster.evictUnserved(STALE_REGISTRATION_MS).catch(() => undefined);
  if (evicted === undefined) return false;
  forgetHere(parts, evicted);
  const why = `no replica served it, registered over ${STALE_REGISTRATION_MS / 1000} s ago`;
  parts.log.info({ environmentId: evicted }, `environment ${evicted}: evicted to make room for ${id} (${why})`);
  return true;
}

/** Forgets environment `gone` in this replica's memory: its registrations, its key id, and its slot unless it is live here. */
function forgetHere(parts: RegistrationParts, gone: string): void {
  parts.registrations.forget(gone);
  if (!parts.table.liveIds().includes(gone)) parts.table.remove(gone);
  parts.keyIds.delete(gone);
}

/**
 * Whether `id` is an environment whose registration must not be refused for a limit: one whose session
 * the state store remembers, one live here, or one answered 409 lately.
 */
async function isKnown(parts: RegistrationParts, id: string): Promise<boolean> {
  const conflictAt = parts.conflicts.get(id);
  if (conflictAt !== undefined && parts.scheduler.now() - conflictAt <= RECENT_CONFLICT_MS) return true;
  if (parts.table.liveIds().includes(id)) return true;
  return (await parts.state.environment(id).catch(() => undefined)) !== undefined;
}

/** The registration body `{"transport":"direct_jsonrpc_v1"}` (other fields ignored). */
function isDirectRequest(body: Buffer): boolean {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && 'transport' in parsed && parsed.transport === DIRECT_TRANSPORT;
  } catch {
    return false;
  }
}
