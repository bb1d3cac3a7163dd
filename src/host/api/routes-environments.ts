/**
 * The environments side of the operator API: the host itself, the environments (list and one), and the
 * overview stream (every environment with its processes, one SSE event per change). With a data dir,
 * the processes only the output logs hold are listed too (see stored-processes), and an environment no
 * executor joined since the host started is listed `offline`. A token limited to some environments sees
 * only those (in the list, the overview and the host's count).
 */
import type { Observable } from 'rxjs';
import { combineLatest, of } from 'rxjs';
import { auditTime, map, switchMap } from 'rxjs/operators';
import type { ProcessSummary } from '../../exec/process-table';
import type { EnvironmentResource, Overview } from '../../wire/operator-api';
import { API_PREFIX } from '../../wire/operator-api';
import type { HostedEnvironment } from '../hosted-environments';
import type { ApiContext } from './api-context';
import { current } from './api-context';
import type { OperatorCaller } from './operator-tokens';
import { mayTouch } from './operator-tokens';
import { overviewFrame } from './event-frames';
import { ApiProblem } from './problem';
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

/** The routes: `/api/v1/host`, `/api/v1/environments`, `/api/v1/environments/{environmentId}`, `/api/v1/overview`. */
export function environmentRoutes(context: ApiContext): Route[] {
  return [
    {
      path: `${API_PREFIX}/host`,
      methods: {
        GET: ({ res, caller }) => {
          const environments = context.environments.liveIds().filter((id) => mayTouch(caller, id)).length;
          sendApiJson(res, context.hostInstance, 200, { hostInstance: context.hostInstance, environments, eventStreams: context.hub.size, waits: context.waits.size });
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
        GET: ({ res, caller }) => {
          const stream = context.hub.open(res, caller.name);
          if (stream.isEnded) return Promise.resolve();
          const subscription = overview$(context, caller).subscribe({
            next: (snapshot) => {
              if (!stream.write(overviewFrame(snapshot))) subscription.unsubscribe();
            },
            complete: () => stream.end(),
          });
          stream.onEnd(() => subscription.unsubscribe());
          return Promise.resolve();
        },
      },
    },
  ];
}
