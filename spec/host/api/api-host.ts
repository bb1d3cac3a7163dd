/**
 * The operator API specs' setup: a real host (`startHostServer` with operator tokens) and a real codex
 * executor in direct mode joined to it, both stopped by the spec file's tracker (import this module
 * before the spec starts anything). Plus helpers that drive processes through the API itself.
 */
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import type { SpawnedExecutor } from '../../../src/executor/spawn-executor';
import type { OperatorApiOptions } from '../../../src/host/api/operator-api';
import type { OperatorTokenSpec } from '../../../src/host/api/operator-tokens';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import type { HostServer, HostServerOptions } from '../../../src/host/host-options';
import { startHostServer } from '../../../src/host/host-server';
import type { ProcessResource, StartProcessRequest } from '../../../src/wire/operator-api';
import { HOST_INSTANCE_HEADER } from '../../../src/wire/operator-api';
import { startDirectExecutor, trackForCleanup } from '../../support/executor';
import type { ApiResponse, SseEvent } from './api-client';
import { ApiClient, paths, within } from './api-client';

/** The operator token the specs' hosts accept (at least 16 printable characters). */
export const OPERATOR_TOKEN = 'api-spec-operator-token-do-not-print';
/** A second accepted token (for per-token limits). */
export const SECOND_OPERATOR_TOKEN = 'api-spec-second-operator-token-do-not-print';
/** The executor's SigV4 credentials (fake; never an operator token). */
export const EXECUTOR_CREDENTIALS = { accessKeyId: 'AKIDAPISPEC', secretAccessKey: 'api-spec-executor-secret-do-not-print' } as const;

/** A host with its executor joined, and a client holding {@link OPERATOR_TOKEN}. */
export interface ApiHost {
  readonly host: HostServer;
  readonly executor: SpawnedExecutor;
  readonly environmentId: string;
  readonly api: ApiClient;
  /** The tokens the host checks (`replaceWith` is the reload SIGHUP does). */
  readonly tokens: OperatorTokens;
  /** Everything the host logged. */
  readonly log: readonly string[];
}

/** How to start an {@link ApiHost}. */
export interface ApiHostOptions {
  readonly environmentId: string;
  /** @default [OPERATOR_TOKEN] */
  readonly tokens?: readonly (string | OperatorTokenSpec)[];
  readonly operator?: Partial<Omit<OperatorApiOptions, 'tokens'>>;
  readonly host?: Partial<Omit<HostServerOptions, 'credentials' | 'operator' | 'log'>>;
  /** Extra arguments of the executor (`--concurrent-requests 4`). @default none */
  readonly executorArgs?: readonly string[];
}

/** Resolves once `environmentId` is connected and its info is known. */
export function environmentReady(host: HostServer, environmentId: string): Promise<unknown> {
  return firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === environmentId && e.state === 'connected' && e.info !== undefined))));
}

/** Starts the host, then the executor, and waits until it joined. */
export async function startApiHost(options: ApiHostOptions): Promise<ApiHost> {
  const log: string[] = [];
  const tokens = new OperatorTokens(options.tokens ?? [OPERATOR_TOKEN]);
  const host = trackForCleanup(
    await startHostServer({
      credentials: new Map([[EXECUTOR_CREDENTIALS.accessKeyId, EXECUTOR_CREDENTIALS.secretAccessKey]]),
      log: (line) => log.push(line),
      ...options.host,
      operator: { tokens, ...options.operator },
    }),
  );
  const ready = environmentReady(host, options.environmentId);
  const extra = options.executorArgs === undefined ? {} : { extraArgs: options.executorArgs };
  const executor = await startDirectExecutor({ remoteUrl: host.url, environmentId: options.environmentId, credentials: EXECUTOR_CREDENTIALS, ...extra });
  await within(ready, 30_000, `environment ${options.environmentId} joining`);
  return { host, executor, environmentId: options.environmentId, api: new ApiClient(host.url, OPERATOR_TOKEN), tokens, log };
}

/** Throws with the answer when its status is not `status`; returns its body otherwise. */
export function expectStatus(response: ApiResponse, status: number): unknown {
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${response.text}`);
  return response.body;
}

/** Starts a process through the API (expects 201). */
export async function startProcess(api: ApiClient, environmentId: string, request: StartProcessRequest, headers?: Record<string, string>): Promise<ProcessResource> {
  return expectStatus(await api.post(paths.processes(environmentId), request, headers === undefined ? {} : { headers }), 201) as ProcessResource;
}

/** The environment's process list through the API. */
export async function listProcesses(api: ApiClient, environmentId: string): Promise<readonly ProcessResource[]> {
  return (expectStatus(await api.get(paths.processes(environmentId)), 200) as { processes: ProcessResource[] }).processes;
}

/** A process's events to their end, decoded. */
export interface Finished {
  readonly events: readonly SseEvent[];
  readonly stdout: string;
  readonly stderr: string;
  readonly pty: string;
  readonly exitCode: number | undefined;
}

/** Decodes `output`/`exited` events. */
export function decodeEvents(events: readonly SseEvent[]): Finished {
  const text = { stdout: '', stderr: '', pty: '' };
  let exitCode: number | undefined;
  for (const event of events) {
    const data = JSON.parse(event.data) as { stream?: 'stdout' | 'stderr' | 'pty'; chunk?: string; exitCode?: number };
    if (event.event === 'output' && data.stream !== undefined) text[data.stream] += Buffer.from(data.chunk ?? '', 'base64').toString('utf8');
    if (event.event === 'exited') exitCode = data.exitCode;
  }
  return { events, ...text, exitCode };
}

/** Reads a process's event stream from the start until the host ends it (after `closed`). */
export async function finished(api: ApiClient, environmentId: string, processId: string, ms = 20_000): Promise<Finished> {
  const opened = await api.events(paths.events(environmentId, processId));
  if (!('stream' in opened)) throw new Error(`events answered ${opened.refused.status}: ${opened.refused.text}`);
  return decodeEvents(await opened.stream.ended(ms));
}

/** Standard base64 of `text`. */
export const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** A host-generated process id: a UUID. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A problem answer's body. */
export interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly code: string;
  readonly detail?: string;
  readonly hostInstance: string;
}

/**
 * Expects `response` to be an RFC 9457 problem with `status` and `code`, naming `hostInstance` in its
 * body and its `exec-rx-host-instance` header; returns the body.
 */
export function expectProblem(response: ApiResponse, status: number, code: string, hostInstance: string): ProblemBody {
  const body = (typeof response.body === 'object' && response.body !== null ? response.body : {}) as Partial<ProblemBody>;
  expect({ status: response.status, contentType: response.headers['content-type'], header: response.headers[HOST_INSTANCE_HEADER], code: body.code, bodyStatus: body.status, hostInstance: body.hostInstance }).toEqual({
    status,
    contentType: 'application/problem+json',
    header: hostInstance,
    code,
    bodyStatus: status,
    hostInstance,
  });
  return body as ProblemBody;
}
