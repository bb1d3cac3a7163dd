/**
 * The environments side of the operator API: the host itself, the environments (list and one), and the
 * overview stream (every environment with its processes, one SSE event per change). The processes only
 * the log store holds are listed too (see stored-processes), and an environment no executor joined
 * since the host started is listed `offline`. A token limited to some environments sees
 * only those (in the list, the overview and the host's count). `/host` also says who the caller is (its token's
 * name, role and environments); the overview may carry one process's events too (`?environmentId=&processId=`).
 */
import type { IncomingMessage } from 'node:http';
import type { Observable } from 'rxjs';
import { combineLatest, from, of, timer } from 'rxjs';
import { auditTime, distinctUntilChanged, exhaustMap, map, switchMap } from 'rxjs/operators';
import type { ProcessSummary } from '../../exec/process-table';
import type { EnvironmentResource, Overview } from '../../wire/operator-api';
import { API_PREFIX } from '../../wire/operator-api';
import { isSafeId } from '../../wire/safe-id';
import type { HostedEnvironment } from '../hosted-environment';
import type { ApiContext } from './api-context';
import { current } from './current';
import type { OperatorCaller } from './operator-tokens';
import { mayTouch } from './operator-tokens';
import { ApiProblem, problemOf } from './problem';
import { processEventPump, resumeAfter, single } from './process-reads';
import { SseChannel } from './sse-channel';
import { sendApiJson } from './responses';
import type { Route } from './router';
import { StoredProcesses } from './stored-processes';

/** An environment as the API shows it. */
export function environmentResource(hosted: HostedEnvironment, processCount: number): EnvironmentResource {
  return {
    id: hosted.id,
    generation: hosted.generation,
    state: hosted.state,
    error: hosted.error === undefined ? null : { code: hosted.errorCode ?? 'HOST_ERROR', message: hosted.error },
    info: hosted.info === undefined ? null : { ...hosted.info },
    processCount,
  };
}

const processesOf = (hosted: HostedEnvironment): readonly ProcessSummary[] => (hosted.environment === undefined ? [] : current(hosted.environment.processes$, []));

/** How many processes an environment lists: its live ones and those only the log store holds. */
function processCount(stored: StoredProcesses, hosted: HostedEnvironment): number {
  const live = processesOf(hosted);
  return live.length + stored.of(hosted.id, new Set(live.map((s) => s.processId))).length;
}

/** The ids of the environments only the log store knows that `caller` may touch (none joined since the start), sorted. */
const offlineIds = (stored: StoredProcesses, caller: OperatorCaller, hosted: readonly HostedEnvironment[]): string[] =>
  stored.offlineIds(new Set(hosted.map((h) => h.id))).filter((id) => mayTouch(caller, id));

/** Every environment `caller` may touch: those joined since the start, then the `offline` ones only the log store knows. */
async function environmentList(context: ApiContext, caller: OperatorCaller): Promise<EnvironmentResource[]> {
  const hosted = current(context.environments.environments$, []);
  const stored = await StoredProcesses.read(context);
  const joined = hosted.filter((h) => mayTouch(caller, h.id)).map((h) => environmentResource(h, processCount(stored, h)));
  return [...joined, ...offlineIds(stored, caller, hosted).map((id) => stored.notHere(id))];
}

/** An environment the overview shows, with its live processes. */
interface OverviewEntry {
  readonly hosted: HostedEnvironment;
  readonly processes: readonly ProcessSummary[];
}

/** One overview snapshot of `entries` (the environments `caller` may touch, with their live processes) and the offline ones. */
async function overviewOf(context: ApiContext, caller: OperatorCaller, entries: readonly OverviewEntry[]): Promise<Overview> {
  const stored = await StoredProcesses.read(context);
  const joined = await Promise.all(
    entries.map(async ({ hosted, processes }) => {
      const live = await Promise.all(processes.map((summary) => context.processes.resource(hosted.id, summary)));
      const all = [...live, ...stored.of(hosted.id, new Set(processes.map((s) => s.processId)))];
      return { ...environmentResource(hosted, all.length), processes: all };
    }),
  );
  const offline = offlineIds(stored, caller, current(context.environments.environments$, [])).map((id) => {
    const processes = stored.of(id);
    return { ...stored.notHere(id), processes };
  });
  return { hostInstance: context.hostInstance, environments: [...joined, ...offline] };
}

/** Every environment `caller` may touch with its process list, as one snapshot per change (bursts within 20 ms coalesce). */
function overview$(context: ApiContext, caller: OperatorCaller): Observable<Overview> {
  return context.environments.environments$.pipe(
    map((all) => all.filter((hosted) => mayTouch(caller, hosted.id))),
    switchMap((list) =>
      list.length === 0
        ? of([])
        : combineLatest(list.map((hosted) => (hosted.environment?.processes$ ?? of<readonly ProcessSummary[]>([])).pipe(map((processes) => ({ hosted, processes }))))),
    ),
    auditTime(20),
    switchMap((entries) => (context.cluster === undefined ? from(overviewOf(context, caller, entries)) : clusterOverview$(context, caller, entries))),
  );
}

/** How often a replica's overview reads again what other replicas hold (they tell it nothing). */
const CLUSTER_OVERVIEW_MS = 2_000;

/** With replicas: the overview of `entries`, read again every {@link CLUSTER_OVERVIEW_MS}, sent when it changed. */
function clusterOverview$(context: ApiContext, caller: OperatorCaller, entries: readonly OverviewEntry[]): Observable<Overview> {
  return timer(0, CLUSTER_OVERVIEW_MS, context.scheduler).pipe(
    exhaustMap(() => from(overviewOf(context, caller, entries))),
    distinctUntilChanged((a, b) => JSON.stringify(a) === JSON.stringify(b)),
  );
}

/** The process an overview stream also carries the events of, and the seq to resume after. */
interface Selection {
  readonly environmentId: string;
  readonly processId: string;
  readonly after: number;
}

/**
 * The overview's `?environmentId=&processId=` (both or neither; `after=` or `Last-Event-ID` resumes the
 * process part). Throws ApiProblem 400 for one without the other or an id that is not safe, 403
 * `FORBIDDEN_ENVIRONMENT` for an environment the caller may not touch.
 */
function selectionOf(req: IncomingMessage, query: URLSearchParams, caller: OperatorCaller): Selection | undefined {
  const environmentId = single(query, 'environmentId');
  const processId = single(query, 'processId');
  if (environmentId === undefined && processId === undefined) return undefined;
  if (environmentId === undefined || processId === undefined) throw new ApiProblem(400, 'INVALID_REQUEST', 'environmentId and processId go together');
  if (!isSafeId(environmentId) || !isSafeId(processId)) {
    throw new ApiProblem(400, 'INVALID_ID', "environmentId and processId must be letters, digits, '.', '_' or '-' (at most 128)");
  }
  if (!mayTouch(caller, environmentId)) throw new ApiProblem(403, 'FORBIDDEN_ENVIRONMENT', `token ${caller.name} may not touch environment ${environmentId}`);
  return { environmentId, processId, after: resumeAfter(req, query) };
}

/**
 * Streams the selected process's events into `channel`, which ends after `closed` or `failed` (the
 * overview goes on); a process that is not there (or cannot be read) is a `failed` frame with the
 * problem's code (`PROCESS_NOT_FOUND` …).
 */
async function followSelected(context: ApiContext, selected: Selection, channel: SseChannel): Promise<void> {
  try {
    const pump = await processEventPump(context, selected.environmentId, selected.processId);
    pump(channel, selected.after, true);
  } catch (error: unknown) {
    const problem = problemOf(error);
    channel.write(channel.framing.failed(problem.code, problem.detail ?? problem.code));
    channel.end();
  }
}

/** The routes: `/api/v1/host`, `/api/v1/environments`, `/api/v1/environments/{environmentId}`, `/api/v1/overview`. */
export function environmentRoutes(context: ApiContext): Route[] {
  return [
    {
      path: `${API_PREFIX}/host`,
      methods: {
        GET: ({ res, caller }) => {
          const environments = context.environments.liveIds().filter((id) => mayTouch(caller, id)).length;
          const scope = caller.environments === undefined ? null : [...caller.environments];
          sendApiJson(res, context.hostInstance, 200, {
            hostInstance: context.hostInstance,
            environments,
            eventStreams: context.hub.size,
            waits: context.waits.size,
            caller: { name: caller.name, role: caller.role, environments: scope },
          });
          return Promise.resolve();
        },
      },
    },
    {
      path: `${API_PREFIX}/environments`,
      methods: {
        GET: async ({ res, caller }) => {
          sendApiJson(res, context.hostInstance, 200, { hostInstance: context.hostInstance, environments: await environmentList(context, caller) });
        },
      },
    },
    {
      path: `${API_PREFIX}/environments/{environmentId}`,
      methods: {
        GET: async ({ res, params }) => {
          const id = params['environmentId'] ?? '';
          const hosted = context.environments.get(id);
          const stored = await StoredProcesses.read(context);
          const known = hosted !== undefined || stored.offlineIds(new Set()).includes(id);
          if (!known) throw new ApiProblem(404, 'ENVIRONMENT_NOT_FOUND', `no environment ${id}`);
          const resource = hosted === undefined ? stored.notHere(id) : environmentResource(hosted, processCount(stored, hosted));
          sendApiJson(res, context.hostInstance, 200, resource);
        },
      },
    },
    {
      path: `${API_PREFIX}/overview`,
      methods: {
        GET: ({ req, res, query, caller }) => {
          const selected = selectionOf(req, query, caller);
          const stream = context.hub.open(res, caller.name);
          if (stream.isEnded) return Promise.resolve();
          const subscription = overview$(context, caller).subscribe({
            next: (snapshot) => {
              if (!stream.write(stream.framing.overview(snapshot))) subscription.unsubscribe();
            },
            complete: () => stream.end(),
          });
          stream.onEnd(() => subscription.unsubscribe());
          if (selected !== undefined) void followSelected(context, selected, new SseChannel(stream));
          return Promise.resolve();
        },
      },
    },
  ];
}
