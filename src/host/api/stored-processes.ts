/**
 * The processes the host's log store holds but no executor lists: those of before a host restart (or
 * of an executor that left), shown with their last known state. A process the store holds is listed
 * once it was described (its argv known: the helpers a start runs, such as the stdin FIFO feeder, never
 * are) and while its owner has not released it (an operator's DELETE).
 */
import type { ProcessMeta } from '../../store/process-meta';
import type { ElsewhereEnvironment } from '../cluster/elsewhere';
import type { EnvironmentResource, ProcessResource } from '../../wire/operator-api';
import type { ApiContext } from './api-context';
import { isoOf } from './process-waits';

/** Why a stored process ended without `closed`: failed on the host's side, or lost in a restart (with why). */
function errorOf(state: ProcessResource['state'], meta: ProcessMeta): ProcessResource['error'] {
  if (state === 'failed') return { code: 'HOST_ERROR', message: "the process's stream failed on the host's side" };
  if (state === 'lost') return { code: 'PROCESS_GONE', message: meta.lostReason ?? 'its executor did not take it back after a host restart' };
  return null;
}

/**
 * A stored process as the API shows it: `closed`, `failed` and `lost` as stored (a lost one with
 * PROCESS_GONE and why); one that was still running or exited by what the store knows, and that no
 * executor lists, is `unknown` (nobody knows how it ended).
 */
export function storedResource(meta: ProcessMeta, shared = false): ProcessResource {
  // With replicas (`shared`) a running or exited process is another replica's, live: shown as the log records it.
  const ended = meta.state === 'closed' || meta.state === 'failed' || meta.state === 'lost';
  const state = ended || (shared && (meta.state === 'running' || meta.state === 'exited')) ? meta.state : 'unknown';
  return {
    id: meta.processId,
    environmentId: meta.environmentId,
    argv: [...meta.argv],
    tty: meta.tty,
    pipeStdin: false,
    state,
    exitCode: meta.exitCode,
    startedAt: isoOf(meta.startedAt),
    exitedAt: isoOf(meta.exitedAt),
    startedBy: meta.startedBy ?? null,
    error: errorOf(state, meta),
  };
}

const shown = (meta: ProcessMeta): boolean => meta.argv.length > 0 && !meta.released;

/**
 * What the log store holds and the API shows, read once (one `LogStore.list`, grouped by environment) for
 * one answer: an answer about many environments (the list, the overview) asks it for each, instead of
 * the store for each.
 */
export class StoredProcesses {
  /** The shown processes, by environment id, each list oldest first (the store's order). */
  private readonly byEnvironment = new Map<string, ProcessMeta[]>();

  private constructor(
    shownMetas: readonly ProcessMeta[],
    /** With replicas: the store is shared, its running processes are other replicas' live ones. */
    private readonly shared: boolean,
    /** With replicas: the environments other replicas own, by id (each with its owner and its state there). */
    private readonly elsewhere: ReadonlyMap<string, ElsewhereEnvironment> = new Map(),
  ) {
    for (const meta of shownMetas) {
      const metas = this.byEnvironment.get(meta.environmentId);
      if (metas === undefined) this.byEnvironment.set(meta.environmentId, [meta]);
      else metas.push(meta);
    }
  }

  /** The store's shown processes now. */
  static async read(context: ApiContext): Promise<StoredProcesses> {
    const elsewhere = context.cluster === undefined ? new Map<string, ElsewhereEnvironment>() : await context.cluster.environmentsElsewhere();
    // A process whose start is in flight here is not listed yet: neither running nor `unknown`.
    const metas = (await context.logs.list()).filter((meta) => shown(meta) && !context.processes.inFlight.has(meta.processId));
    return new StoredProcesses(metas, context.cluster !== undefined, elsewhere);
  }

  /** The stored processes of `environmentId` not in `live` (ids), oldest first. */
  of(environmentId: string, live: ReadonlySet<string> = new Set()): ProcessResource[] {
    return (this.byEnvironment.get(environmentId) ?? []).filter((meta) => !live.has(meta.processId)).map((meta) => storedResource(meta, this.shared));
  }

  /** The ids of the environments it holds processes of, or other replicas own, that are not in `hosted`, sorted. */
  offlineIds(hosted: ReadonlySet<string>): string[] {
    const ids = new Set([...this.byEnvironment.keys(), ...this.elsewhere.keys()]);
    return [...ids].filter((id) => !hosted.has(id)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * An environment this replica does not hold, as the API shows it: when another replica owns it, the
   * state, generation and error its owner published (`offline`, generation 0, once the owner's lease ran
   * out: see `cluster/elsewhere`); else `offline`, generation 0. Its info is the owner's own.
   */
  notHere(id: string): EnvironmentResource {
    const resource = offlineEnvironment(id, this.of(id).length);
    const there = this.elsewhere.get(id);
    return there === undefined ? resource : { ...resource, state: there.state, generation: there.generation, error: there.error === undefined ? null : { ...there.error } };
  }
}

/** The stored processes of `environmentId` not in `live` (ids), oldest first. */
export async function storedProcesses(context: ApiContext, environmentId: string, live: ReadonlySet<string>): Promise<ProcessResource[]> {
  return (await StoredProcesses.read(context)).of(environmentId, live);
}

/** One stored process, if the store holds it and it is shown (see the module's doc). */
export async function storedProcess(context: ApiContext, environmentId: string, processId: string): Promise<ProcessResource | undefined> {
  const meta = await context.logs.meta({ environmentId, processId });
  return meta === undefined || !shown(meta) ? undefined : storedResource(meta, context.cluster !== undefined);
}

/** An environment no executor joined since the host started, as the API shows it: `offline`, generation 0. */
export const offlineEnvironment = (id: string, processCount: number): EnvironmentResource => ({ id, generation: 0, state: 'offline', error: null, info: null, processCount });
