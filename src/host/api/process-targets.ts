/**
 * Finding the process a request under `/environments/{environmentId}/processes` names: a live one (its
 * environment's current generation lists it), or one only the log store holds (of before a restart, or
 * of an executor that left: see `./stored-processes`), and how the API lists and shows either.
 */
import type { Environment } from '../../environment/environment';
import type { ProcessResource } from '../../wire/operator-api';
import type { ApiContext } from './api-context';
import { environmentOf, refuseIfElsewhere } from './api-context';
import { listed } from './current';
import type { HostedProcess } from './hosted-processes';
import { ApiProblem } from './problem';
import { storedProcess, storedProcesses, StoredProcesses } from './stored-processes';

/** A live process a request names, with its environment. */
export interface Target {
  readonly environmentId: string;
  readonly environment: Environment;
  readonly hosted: HostedProcess;
}

const notFound = (environmentId: string, processId: string, live = ''): ApiProblem =>
  new ApiProblem(404, 'PROCESS_NOT_FOUND', `no ${live}process ${processId} in environment ${environmentId}`);

/**
 * The live process `params` name (one whose start is in flight here once that start settled). Rejects with ApiProblem 404 `PROCESS_NOT_FOUND` (an environment only the
 * log store knows, offline, has no live process), or the environment's 404 / 503 (see `environmentOf`).
 */
export async function target(context: ApiContext, params: Readonly<Record<string, string>>): Promise<Target> {
  const environmentId = params['environmentId'] ?? '';
  const processId = params['processId'] ?? '';
  await refuseIfElsewhere(context, environmentId);
  if (context.environments.get(environmentId) === undefined && (await storedProcesses(context, environmentId, new Set())).length > 0) {
    throw notFound(environmentId, processId, 'live ');
  }
  const environment = environmentOf(context, environmentId);
  // Its start is in flight here (its log is kept; its environment lists it, with its stdin, once the start
  // resolved): look once it settled.
  if (await context.processes.inFlight.settled(environmentId, processId)) return target(context, params);
  const hosted = context.processes.get(environmentId, environment, processId);
  if (hosted === undefined) throw notFound(environmentId, processId);
  return { environmentId, environment, hosted };
}

async function resourceOf(context: ApiContext, { environmentId, environment, hosted }: Target): Promise<ProcessResource> {
  const summary = listed(environment).find((s) => s.processId === hosted.process.processId);
  if (summary === undefined) throw notFound(environmentId, hosted.process.processId);
  return context.processes.resource(environmentId, summary);
}

/**
 * An environment's processes: the live ones, then those only its log store holds (of before a restart:
 * see stored-processes). An environment no executor joined since the start lists its stored ones alone.
 */
export async function processList(context: ApiContext, environmentId: string): Promise<ProcessResource[]> {
  const stored = await StoredProcesses.read(context);
  if (context.environments.get(environmentId) === undefined) {
    const offline = stored.of(environmentId);
    if (offline.length > 0) return offline;
  }
  const list = listed(environmentOf(context, environmentId));
  const live = new Set(list.map((s) => s.processId));
  context.processes.prune(environmentId, live);
  const resources = await Promise.all(list.map((summary) => context.processes.resource(environmentId, summary)));
  return [...resources, ...stored.of(environmentId, live)];
}

/** One process: the live one, else the one its log store holds; 404 (or the environment's 503) otherwise. */
export async function processResourceOf(context: ApiContext, params: Readonly<Record<string, string>>): Promise<ProcessResource> {
  try {
    return await resourceOf(context, await target(context, params));
  } catch (error: unknown) {
    const stored = await storedProcess(context, params['environmentId'] ?? '', params['processId'] ?? '');
    if (stored === undefined || !(error instanceof ApiProblem)) throw error;
    return stored;
  }
}
