/**
 * What the file routes share: the operator API's context, their settings, the roots, the per-environment
 * queue and handle cap, the host's log, the upload sweeper and the change pollers; and how one request
 * gets its {@link FileCalls}.
 */
import type { ServerResponse } from 'node:http';
import type { SchedulerLike } from 'rxjs';
import type { HostLogger } from '../../host-logger';
import type { ApiContext } from '../api-context';
import { environmentOf, refuseIfElsewhere } from '../api-context';
import { ApiProblem } from '../problem';
import type { RouteContext } from '../router';
import type { ChangeWatches } from './change-watches';
import { FairQueue, HandleCap } from './fair-queue';
import type { EnvironmentFiles } from './file-calls';
import { FileCalls } from './file-calls';
import type { FilePath } from './file-path';
import { checkedPath } from './file-path';
import type { FileRoots } from './file-roots';
import type { FilesSettings } from './files-options';
import type { UploadSweeper } from './upload-sweeper';

/** What the file routes share (see the module's doc). */
export interface FilesContext {
  readonly api: ApiContext;
  readonly settings: FilesSettings;
  readonly roots: FileRoots;
  /** Where a download cut because its file changed is logged. @default none */
  readonly log: HostLogger | undefined;
  readonly uploads: UploadSweeper;
  readonly watches: ChangeWatches;
  /** The queue and handle cap of `environmentId` (one each per environment id, for the host's life). */
  sharedOf(environmentId: string): EnvironmentFiles;
}

/** Makes {@link FilesContext.sharedOf}: one queue and cap per environment id (the cap's wait timed on `scheduler`). */
export function sharedPerEnvironment(settings: FilesSettings, scheduler: SchedulerLike): (environmentId: string) => EnvironmentFiles {
  const shared = new Map<string, EnvironmentFiles>();
  return (environmentId) => {
    let files = shared.get(environmentId);
    if (files === undefined) {
      files = { queue: new FairQueue(settings.requestsInFlight), handles: new HandleCap(settings.maxHandles, scheduler, settings.handleWaitMs) };
      shared.set(environmentId, files);
    }
    return files;
  };
}

/** An AbortSignal that aborts once `res` closed before it finished (the client went away). */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new ApiProblem(499, 'CLOSED', 'the client went away'));
  });
  return controller.signal;
}

/**
 * The calls of one request on the environment of its path's `{environmentId}`: 503 `ENVIRONMENT_ELSEWHERE`
 * when another replica owns it, 404/503 when it is not here; their pending turns dropped when the client goes.
 */
export async function callsOf(files: FilesContext, route: RouteContext): Promise<FileCalls> {
  const environmentId = route.params['environmentId'] ?? '';
  await refuseIfElsewhere(files.api, environmentId);
  const environment = environmentOf(files.api, environmentId);
  return new FileCalls(environmentId, environment, files.sharedOf(environmentId), clientGone(route.res));
}

/** The checked `?path=` of a request (400 `INVALID_PATH`; 400 `INVALID_REQUEST` when given twice). */
export function pathParam(query: URLSearchParams, name = 'path'): FilePath {
  const values = query.getAll(name);
  if (values.length > 1) throw new ApiProblem(400, 'INVALID_REQUEST', `${name} may be given once`);
  return checkedPath(values[0], name);
}

/** A checked path that also lies under the host's roots (403 `OUTSIDE_FILES_ROOT`). */
export async function allowedPath(files: FilesContext, calls: FileCalls, path: FilePath): Promise<FilePath> {
  await files.roots.check(calls, path);
  return path;
}
