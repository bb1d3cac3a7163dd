import type { SchedulerLike } from 'rxjs';
import type { Environment } from '../../environment/environment';
import type { RewriteStep } from '../cluster/cluster-options';
import type { ElsewhereEnvironment } from '../cluster/elsewhere';
import type { HostedEnvironments } from '../hosted-environments';
import type { LogStore } from '../../store/log-store';
import type { HostedProcesses } from './hosted-processes';
import type { LogTickets } from './log-tickets';
import type { ProcessWaits } from './process-waits';
import { ApiProblem } from './problem';
import type { SseHub } from './sse';

/** What the operator API's routes share. */
export interface ApiContext {
  /** This host's instance id (a UUID made at start). */
  readonly hostInstance: string;
  readonly environments: HostedEnvironments;
  readonly processes: HostedProcesses;
  readonly hub: SseHub;
  /** The open `…/wait` requests; the host's stop answers them 503. */
  readonly waits: ProcessWaits;
  /** The largest request body the API reads. */
  readonly maxBodyBytes: number;
  /** How long a paused event stream waits for its client to take what was sent. */
  readonly stallMs: number;
  /** The host's clock and timers (the event streams' stall timer). */
  readonly scheduler: SchedulerLike;
  /** The processes' output logs (the host's log store port): what the event streams, `/log` and the lists read. */
  readonly logs: LogStore;
  /** The open download tickets of `…/log`. */
  readonly tickets: LogTickets;
  /** With replicas: who owns an environment this replica does not hold. */
  readonly cluster: ClusterView | undefined;
}

/** What the operator API asks of a replica's cluster. */
export interface ClusterView {
  /** The replica that owns `id` now, when it is not this one. Rejects when the shared store does not answer. */
  ownerElsewhere(id: string): Promise<string | undefined>;
  /** Whether the shared store lost its data a moment ago (its owners may not have written an environment back yet). Rejects when it does not answer. */
  unsettled(): Promise<boolean>;
  /**
   * The environments other replicas own now, by id, each with its owner and the state its owner published
   * (`offline` once the owner's lease ran out). Never rejects (empty when the store does not answer).
   */
  environmentsElsewhere(): Promise<ReadonlyMap<string, ElsewhereEnvironment>>;
  /** Adds `step` to what the replica writes back once the shared store lost its data (see `RewriteStep`). */
  onRewrite(step: RewriteStep): void;
  /** The internal url replica `owner` advertises now (where its environments' calls are forwarded). Rejects when the store does not answer. */
  replicaUrl(owner: string): Promise<string | undefined>;
}

/**
 * With replicas, throws ApiProblem 503 `ENVIRONMENT_ELSEWHERE` with `Retry-After` when another replica
 * owns `environmentId`: a call for one of its processes is answered by the replica its executor is on,
 * even when this one still holds a generation of it (one that failed, one whose claim is not made yet, or
 * one another replica took over and this one has not let go of yet). Replicas that forward send such a
 * call to the owner before it gets here (`./forwarding`); it comes here when the owner changed since, or
 * a forwarded call reached a replica that is no longer the owner (a forward is never forwarded again).
 * Reads (lists, events, `/log`) are served from the shared log on any replica and never come here.
 * Rejects with the store's error (StoreUnavailableError: 503 too) when the shared store does not answer.
 */
export async function refuseIfElsewhere(context: ApiContext, environmentId: string): Promise<void> {
  if (context.cluster === undefined) return;
  const owner = await context.cluster.ownerElsewhere(environmentId);
  if (owner !== undefined) {
    const detail = `environment ${environmentId} is served by another replica (${owner}); retry, through the load balancer`;
    throw new ApiProblem(503, 'ENVIRONMENT_ELSEWHERE', detail, { 'retry-after': '1' });
  }
  const hosted = context.environments.get(environmentId);
  if ((hosted === undefined || hosted.state === 'failed') && (await context.cluster.unsettled())) {
    const detail = `the shared store lost its data a moment ago: environment ${environmentId} may not be written back yet; retry`;
    throw new ApiProblem(503, 'ENVIRONMENT_ELSEWHERE', detail, { 'retry-after': '1' });
  }
}

/**
 * The current generation's Environment of `environmentId`. Throws ApiProblem 404 `ENVIRONMENT_NOT_FOUND`,
 * or 503 (`ENVIRONMENT_RECOVERING` while its first handshake runs, `ENVIRONMENT_FAILED` once it failed:
 * the executor may start a new generation) with `Retry-After`.
 */
export function environmentOf(context: ApiContext, environmentId: string): Environment {
  const hosted = context.environments.get(environmentId);
  if (hosted === undefined) throw new ApiProblem(404, 'ENVIRONMENT_NOT_FOUND', `no environment ${environmentId}`);
  if (hosted.environment !== undefined) return hosted.environment;
  if (hosted.state === 'starting') throw new ApiProblem(503, 'ENVIRONMENT_RECOVERING', `environment ${environmentId} is starting`, { 'retry-after': '1' });
  throw new ApiProblem(503, 'ENVIRONMENT_FAILED', `environment ${environmentId} failed: ${hosted.error ?? 'unknown error'}`, { 'retry-after': '5' });
}

