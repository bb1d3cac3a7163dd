/**
 * The environments side of the operator API: the host itself, the environments (list and one), and the
 * overview stream (every environment with its processes, one SSE event per change).
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
      environments: entries.map(({ hosted, processes }) => ({
        ...environmentResource(hosted, processes.length),
        processes: processes.map((summary) => context.processes.resource(hosted.id, summary)),
      })),
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
          sendApiJson(res, context.hostInstance, 200, { hostInstance: context.hostInstance, environments: context.environments.liveIds().length, eventStreams: context.hub.size });
          return Promise.resolve();
        },
      },
    },
    {
      path: `${API_PREFIX}/environments`,
      methods: {
        GET: ({ res }) => {
          const environments = current(context.environments.environments$, []).map((hosted) => environmentResource(hosted, processesOf(hosted).length));
          sendApiJson(res, context.hostInstance, 200, { hostInstance: context.hostInstance, environments });
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
          if (hosted === undefined) throw new ApiProblem(404, 'ENVIRONMENT_NOT_FOUND', `no environment ${id}`);
          sendApiJson(res, context.hostInstance, 200, environmentResource(hosted, processesOf(hosted).length));
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
