/**
 * The environments side of the operator API: the host itself, the environments (list and one), and the
 * overview stream (every environment with its processes, one SSE event per change). With a data dir,
 * the processes only the output logs hold are listed too (see stored-processes), and an environment no
 * executor joined since the host started is listed `offline`.
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

/** Every environment: those joined since the start, then the `offline` ones only the output logs know. */
function environmentList(context: ApiContext): EnvironmentResource[] {
  const hosted = current(context.environments.environments$, []);
  const offline = offlineEnvironmentIds(context, new Set(hosted.map((h) => h.id))).map((id) => offlineEnvironment(id, storedProcesses(context, id, new Set()).length));
  return [...hosted.map((h) => environmentResource(h, processCount(context, h))), ...offline];
}

/** Every environment with its process list, as one snapshot per change (bursts within 20 ms coalesce). */
function overview$(context: ApiContext): Observable<Overview> {
  return context.environments.environments$.pipe(
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
        ...offlineEnvironmentIds(context, new Set(entries.map(({ hosted }) => hosted.id))).map((id) => {
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
        GET: ({ res }) => {
          sendApiJson(res, context.hostInstance, 200, { hostInstance: context.hostInstance, environments: context.environments.liveIds().length, eventStreams: context.hub.size, waits: context.waits.size });
          return Promise.resolve();
        },
      },
    },
    {
      path: `${API_PREFIX}/environments`,
      methods: {
        GET: ({ res }) => {
          sendApiJson(res, context.hostInstance, 200, { hostInstance: context.hostInstance, environments: environmentList(context) });
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
        GET: ({ res, tokenId }) => {
          const stream = context.hub.open(res, tokenId);
          if (stream.isEnded) return Promise.resolve();
          const subscription = overview$(context).subscribe({
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
