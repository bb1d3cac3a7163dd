/**
 * The environments side of the operator API: the host itself, the environments (list and one), and the
 * overview stream (every environment with its processes, one SSE event per change). With a data dir,
 * the processes only the output logs hold are listed too (see stored-processes), and an environment no
 * executor joined since the host started is listed `offline`. A token limited to some environments sees
 * only those (in the list, the overview and the host's count). `/host` also says who the caller is (its token's
 * name, role and environments); the overview may carry one process's events too (`?environmentId=&processId=`).
 */
import type { IncomingMessage } from 'node:http';
import type { Observable } from 'rxjs';
import { combineLatest, of } from 'rxjs';
import { auditTime, map, switchMap } from 'rxjs/operators';
import type { ProcessSummary } from '../../exec/process-table';
import type { EnvironmentResource, Overview } from '../../wire/operator-api';
import { API_PREFIX } from '../../wire/operator-api';
import { isSafeId } from '../../wire/safe-id';
import type { HostedEnvironment } from '../hosted-environments';
import type { ApiContext } from './api-context';
import { current } from './api-context';
import type { OperatorCaller } from './operator-tokens';
import { mayTouch } from './operator-tokens';
import { failedFrame, overviewFrame } from './event-frames';
import { ApiProblem, problemOf } from './problem';
import { processEventPump, resumeAfter, single } from './routes-processes';
import { SseChannel } from './sse';
import { sendApiJson } from './responses';
import type { Route } from './router';
import { offlineEnvironment, offlineEnvironmentIds, storedProcesses } from './stored-processes';

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

/** How many processes an environment lists: its live ones and those only its output logs hold. */
const processCount = (context: ApiContext, hosted: HostedEnvironment): number => {
  const live = processesOf(hosted);
  return live.length + storedProcesses(context, hosted.id, new Set(live.map((s) => s.processId))).length;
};

/** Every environment `caller` may touch: those joined since the start, then the `offline` ones only the output logs know. */
function environmentList(context: ApiContext, caller: OperatorCaller): EnvironmentResource[] {
  const hosted = current(context.environments.environments$, []);
  const offline = offlineEnvironmentIds(context, new Set(hosted.map((h) => h.id)))
    .filter((id) => mayTouch(caller, id))
    .map((id) => offlineEnvironment(id, storedProcesses(context, id, new Set()).length));
  return [...hosted.filter((h) => mayTouch(caller, h.id)).map((h) => environmentResource(h, processCount(context, h))), ...offline];
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
    map((entries) => ({
      hostInstance: context.hostInstance,
      environments: [
        ...entries.map(({ hosted, processes }) => {
          const all = [...processes.map((summary) => context.processes.resource(hosted.id, summary)), ...storedProcesses(context, hosted.id, new Set(processes.map((s) => s.processId)))];
          return { ...environmentResource(hosted, all.length), processes: all };
        }),
        ...offlineEnvironmentIds(context, new Set(current(context.environments.environments$, []).map((hosted) => hosted.id)))
          .filter((id) => mayTouch(caller, id))
          .map((id) => {
            const stored = storedProcesses(context, id, new Set());
            return { ...offlineEnvironment(id, stored.length), processes: stored };
          }),
      ],
    })),
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
  if (!isSafeId(environmentId) || !isSafeId(processId)) throw new ApiProblem(400, 'INVALID_ID', "environmentId and processId must be letters, digits, '.', '_' or '-' (at most 128)");
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
    channel.write(failedFrame(problem.code, problem.detail ?? problem.code));
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
        GET: ({ res, caller }) => {
          sendApiJson(res, context.hostInstance, 200, { hostInstance: context.hostInstance, environments: environmentList(context, caller) });
          return Promise.resolve();
        },
      },
    },
    {
      path: `${API_PREFIX}/environments/{environmentId}`,
      methods: {
        GET: ({ res, params }) => {
          const id = params['environmentId'] ?? '';
          const hosted = context.environments.get(id);
          const stored = hosted === undefined ? storedProcesses(context, id, new Set()) : [];
          if (hosted === undefined && stored.length === 0) throw new ApiProblem(404, 'ENVIRONMENT_NOT_FOUND', `no environment ${id}`);
          sendApiJson(res, context.hostInstance, 200, hosted === undefined ? offlineEnvironment(id, stored.length) : environmentResource(hosted, processCount(context, hosted)));
          return Promise.resolve();
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
              if (!stream.write(overviewFrame(snapshot))) subscription.unsubscribe();
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
