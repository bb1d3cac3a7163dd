/**
 * The processes side of the operator API: start, list, get and release processes; their events as SSE
 * and their output bytes (`/log`, from the output log);
 * their stdin (written once per `writeId`, ended once); interrupt and terminate.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Environment } from '../../environment/environment';
import { decodeCanonical } from '../../wire/base64';
import type { ProcessResource } from '../../wire/operator-api';
import { API_PREFIX, HOST_INSTANCE_HEADER, IDEMPOTENCY_KEY_HEADER, StartProcessRequest, StdinWriteRequest, TtySize } from '../../wire/operator-api';
import type { ApiContext } from './api-context';
import { environmentOf, listed } from './api-context';
import type { HostedProcess } from './hosted-processes';
import { discardBody, readJsonBody } from './json-body';
import { ApiProblem } from './problem';
import { logSelectionOf, sendLogBytes } from './log-bytes';
import { TICKET_PARAM } from './log-tickets';
import { afterLogEnd } from './log-continuation';
import { streamLogEvents } from './log-event-stream';
import { streamProcessEvents } from './process-event-stream';
import { sendApiJson, sendEmpty } from './responses';
import { isoOf, settledOnce, storedWaitAnswer } from './process-waits';
import { storedProcess, storedProcesses } from './stored-processes';
import type { Route, RouteContext } from './router';
import type { EventSink } from './sse';

const PROCESSES = `${API_PREFIX}/environments/{environmentId}/processes`;
const PROCESS = `${PROCESSES}/{processId}`;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
const SEQ = /^(0|[1-9][0-9]{0,15})$/;

interface Target {
  readonly environmentId: string;
  readonly environment: Environment;
  readonly hosted: HostedProcess;
}

function target(context: ApiContext, params: Readonly<Record<string, string>>): Target {
  const environmentId = params['environmentId'] ?? '';
  const processId = params['processId'] ?? '';
  // An environment only the output logs know (offline) has no live process: 404 for the process.
  const offline = context.environments.get(environmentId) === undefined && storedProcesses(context, environmentId, new Set()).length > 0;
  if (offline) throw new ApiProblem(404, 'PROCESS_NOT_FOUND', `no live process ${processId} in environment ${environmentId}`);
  const environment = environmentOf(context, environmentId);
  const hosted = context.processes.get(environmentId, environment, processId);
  if (hosted === undefined) throw new ApiProblem(404, 'PROCESS_NOT_FOUND', `no process ${processId} in environment ${environmentId}`);
  return { environmentId, environment, hosted };
}

function resourceOf(context: ApiContext, { environmentId, environment, hosted }: Target): ProcessResource {
  const summary = listed(environment).find((s) => s.processId === hosted.process.processId);
  if (summary === undefined) throw new ApiProblem(404, 'PROCESS_NOT_FOUND', `no process ${hosted.process.processId} in environment ${environmentId}`);
  return context.processes.resource(environmentId, summary);
}

/**
 * An environment's processes: the live ones, then those only its output logs hold (of before a restart:
 * see stored-processes). An environment no executor joined since the start lists its stored ones alone.
 */
function processList(context: ApiContext, environmentId: string): ProcessResource[] {
  if (context.environments.get(environmentId) === undefined) {
    const stored = storedProcesses(context, environmentId, new Set());
    if (stored.length > 0) return stored;
  }
  const list = listed(environmentOf(context, environmentId));
  const live = new Set(list.map((s) => s.processId));
  context.processes.prune(environmentId, live);
  return [...list.map((summary) => context.processes.resource(environmentId, summary)), ...storedProcesses(context, environmentId, live)];
}

/** One process: the live one, else the one its output log holds; 404 (or the environment's 503) otherwise. */
function processResourceOf(context: ApiContext, params: Readonly<Record<string, string>>): ProcessResource {
  const environmentId = params['environmentId'] ?? '';
  const processId = params['processId'] ?? '';
  try {
    return resourceOf(context, target(context, params));
  } catch (error: unknown) {
    const stored = storedProcess(context, environmentId, processId);
    if (stored === undefined || !(error instanceof ApiProblem)) throw error;
    return stored;
  }
}

/** The one value of query parameter `name`, if given; 400 when it is given more than once. */
export function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new ApiProblem(400, 'INVALID_REQUEST', `${name} may be given once`);
  return values[0];
}

/** `?follow=`: `true` (the default) or `false`, nothing else. */
function followOf(query: URLSearchParams): boolean {
  const raw = single(query, 'follow');
  if (raw === undefined) return true;
  if (raw !== 'true' && raw !== 'false') throw new ApiProblem(400, 'INVALID_REQUEST', 'follow must be true or false');
  return raw === 'true';
}

/** Streams a process's events after a seq into a sink (see {@link processEventPump}). */
export type ProcessEventPump = (sink: EventSink, afterSeq: number, follow: boolean) => void;

/**
 * What streams the events of `processId` of `environmentId`, found before any byte is written (so a
 * process that is not there is an ApiProblem: 404 `PROCESS_NOT_FOUND`, or the environment's 404 / 503).
 * With a data dir, every process the store holds is read from its log, at the reader's pace (one of an
 * earlier run of the host too; a process found running before a restart, `unknown`, is waited for while
 * its executor is expected back); else from the live process's history.
 */
export async function processEventPump(context: ApiContext, environmentId: string, processId: string): Promise<ProcessEventPump> {
  const key = { environmentId, processId };
  const store = context.outputLogs;
  const log = await store?.openLog(key);
  if (store !== undefined && log !== undefined) return (sink, after, follow) => streamLogEvents(log, sink, after, { follow, afterEnd: afterLogEnd(context.environments, store, key) });
  const { hosted } = target(context, { environmentId, processId });
  return (sink, after, follow) => streamProcessEvents(hosted.process, sink, after, { follow, stallMs: context.stallMs, scheduler: context.scheduler });
}

/** The seq to resume after: `?after=` wins over `Last-Event-ID`; 0 when neither is given. */
export function resumeAfter(req: IncomingMessage, query: URLSearchParams): number {
  const raw = single(query, 'after') ?? (typeof req.headers['last-event-id'] === 'string' ? req.headers['last-event-id'] : undefined);
  if (raw === undefined || raw === '') return 0;
  if (!SEQ.test(raw.trim())) throw new ApiProblem(400, 'INVALID_REQUEST', 'after / Last-Event-ID must be a seq (a non-negative integer)');
  return Number(raw.trim());
}

function idempotencyKey(req: IncomingMessage): string | undefined {
  const key = req.headers[IDEMPOTENCY_KEY_HEADER];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) throw new ApiProblem(400, 'INVALID_REQUEST', 'Idempotency-Key must be 1 to 255 printable characters');
  return key;
}

async function start(context: ApiContext, { req, res, params, caller, audit }: RouteContext): Promise<void> {
  const environmentId = params['environmentId'] ?? '';
  const key = idempotencyKey(req);
  const request = await readJsonBody(req, StartProcessRequest, context.maxBodyBytes);
  // Keyed starts are scoped by the token's name: stable across reloads and restarts.
  const idempotency = key === undefined ? undefined : { tokenId: caller.name, key };
  // A start recorded before a restart is answered once its executor's session is taken back (or gone).
  await context.processes.settled(environmentId, idempotency);
  const environment = environmentOf(context, environmentId);
  const started = await context.processes.start(environmentId, environment, request, idempotency, caller.name);
  const resource = context.processes.startedResource(environment, started);
  if (audit !== undefined) {
    audit.processId = resource.id;
    audit.argv = request.argv;
  }
  const location = `${API_PREFIX}/environments/${encodeURIComponent(environmentId)}/processes/${encodeURIComponent(resource.id)}`;
  sendApiJson(res, context.hostInstance, started.replayed ? 200 : 201, resource, started.replayed ? { location, 'idempotent-replayed': 'true' } : { location });
}

async function writeStdin(context: ApiContext, { req, res, params }: RouteContext): Promise<void> {
  const request = await readJsonBody(req, StdinWriteRequest, context.maxBodyBytes);
  const bytes = decodeCanonical(request.data);
  if (bytes === undefined) throw new ApiProblem(400, 'INVALID_REQUEST', 'data must be standard base64');
  const found = target(context, params);
  if (found.hosted.stdin === undefined) throw new ApiProblem(409, 'STDIN_CLOSED', 'this process has no stdin: start it with pipeStdin or tty');
  await found.hosted.stdin.write(request.writeId, bytes);
  sendApiJson(res, context.hostInstance, 200, { writeId: request.writeId, status: 'accepted' });
}

/**
 * `GET …/log`: the process's output bytes from its output log (see log-bytes). Without a data dir the
 * host keeps no log: 409 `LOG_READ_FAILED` for a process it lists (read the events route instead).
 */
async function sendLog(context: ApiContext, { req, res, params, query }: RouteContext): Promise<void> {
  const selection = logSelectionOf(query);
  const log = await context.outputLogs?.openLog({ environmentId: params['environmentId'] ?? '', processId: params['processId'] ?? '' });
  // Saved as a file by a browser that navigated here (with a ticket); the id is a safe id, quotable as it is.
  const disposition = `attachment; filename="${params['processId'] ?? 'output'}.log"`;
  if (log !== undefined) return sendLogBytes(req, res, log, selection, { [HOST_INSTANCE_HEADER]: context.hostInstance, 'content-disposition': disposition });
  target(context, params);
  throw new ApiProblem(409, 'LOG_READ_FAILED', 'this host keeps no output log of the process (it runs without a data dir): read its events instead');
}

/**
 * `POST …/log/tickets`: a download ticket for the caller (see log-tickets), for a process the host lists
 * (live or stored; else 404). Answers 201 `{ url, expiresAt }`: the log's path with the ticket (a
 * reference relative to the host's origin) and when the ticket expires (ISO-8601).
 */
async function issueTicket(context: ApiContext, { req, res, params, caller }: RouteContext): Promise<void> {
  await discardBody(req, context.maxBodyBytes);
  const resource = processResourceOf(context, params);
  const { ticket, expiresAt } = context.tickets.issue(caller, resource.environmentId, resource.id);
  const url = `${API_PREFIX}/environments/${encodeURIComponent(resource.environmentId)}/processes/${encodeURIComponent(resource.id)}/log?${TICKET_PARAM}=${ticket}`;
  sendApiJson(res, context.hostInstance, 201, { url, expiresAt: new Date(expiresAt).toISOString() });
}

/**
 * `POST …/wait`: once the process has exited, `{ exitCode, exitedAt }` (see process-waits). A process only
 * the output logs hold (of before a restart) is answered from its log once its executor's take-back
 * settled: its exit, or 409 `PROCESS_GONE` (lost, or how it ended is unknown) / `HOST_ERROR` (failed).
 */
async function waitRoute(context: ApiContext, { req, res, params }: RouteContext): Promise<void> {
  await discardBody(req, context.maxBodyBytes);
  await answerWait(context, res, params);
}

async function answerWait(context: ApiContext, res: ServerResponse, params: Readonly<Record<string, string>>): Promise<void> {
  const environmentId = params['environmentId'] ?? '';
  const processId = params['processId'] ?? '';
  const key = { environmentId, processId };
  if (context.waits.refuseIfClosed(res, context.hostInstance)) return;
  let found: Target;
  try {
    found = target(context, params);
  } catch (error: unknown) {
    const stored = storedProcess(context, environmentId, processId);
    if (stored === undefined || !(error instanceof ApiProblem)) throw error;
    if (stored.state === 'unknown' && context.environments.awaitingTakeBack(environmentId)) {
      // Its executor may still take it back: look again once that settled (or the host stops).
      await settledOnce(context.environments.takeBackSettled(environmentId));
      if (res.destroyed) return;
      return answerWait(context, res, params);
    }
    sendApiJson(res, context.hostInstance, 200, storedWaitAnswer(stored, isoOf(context.outputLogs?.meta(key)?.exitedAt)));
    return;
  }
  context.waits.waitFor(res, context.hostInstance, found.hosted.process, () => context.outputLogs?.meta(key)?.exitedAt ?? context.processes.timesOf(processId)?.exitedAt);
}

/** The routes under `/api/v1/environments/{environmentId}/processes`. */
export function processRoutes(context: ApiContext): Route[] {
  const json = (status: number, body: unknown) => ({ res }: RouteContext) => sendApiJson(res, context.hostInstance, status, body);
  return [
    {
      path: PROCESSES,
      audit: { POST: 'start' },
      methods: {
        GET: ({ res, params }) => {
          sendApiJson(res, context.hostInstance, 200, { processes: processList(context, params['environmentId'] ?? '') });
          return Promise.resolve();
        },
        POST: (route) => start(context, route),
      },
    },
    {
      path: PROCESS,
      audit: { DELETE: 'release' },
      methods: {
        GET: ({ res, params }) => {
          sendApiJson(res, context.hostInstance, 200, processResourceOf(context, params));
          return Promise.resolve();
        },
        DELETE: ({ res, params }) => {
          const { hosted } = target(context, params);
          const state = hosted.process.state;
          if (state === 'running' || state === 'exited') throw new ApiProblem(409, 'PROCESS_RUNNING', 'the process has not closed: terminate it first');
          hosted.process.release();
          sendEmpty(res, context.hostInstance, 204);
          return Promise.resolve();
        },
      },
    },
    {
      path: `${PROCESS}/events`,
      methods: {
        GET: async ({ req, res, params, query, caller }) => {
          const after = resumeAfter(req, query);
          const follow = followOf(query);
          const pump = await processEventPump(context, params['environmentId'] ?? '', params['processId'] ?? '');
          pump(context.hub.open(res, caller.name), after, follow);
        },
      },
    },
    // A wait changes nothing: a view token may wait too.
    { path: `${PROCESS}/wait`, reads: ['POST'], methods: { POST: (route) => waitRoute(context, route) } },
    // A browser downloads by navigating, without a header: a ticket (made below) stands for the token.
    { path: `${PROCESS}/log`, ticket: (ticket, params) => context.tickets.redeem(ticket, params['environmentId'] ?? '', params['processId'] ?? ''), methods: { GET: (route) => sendLog(context, route) } },
    // Making a ticket changes nothing: a view token may download too.
    { path: `${PROCESS}/log/tickets`, reads: ['POST'], methods: { POST: (route) => issueTicket(context, route) } },
    { path: `${PROCESS}/stdin`, audit: { POST: 'stdin' }, methods: { POST: (route) => writeStdin(context, route) } },
    {
      path: `${PROCESS}/stdin/end`,
      audit: { POST: 'stdin end' },
      methods: {
        POST: async (route) => {
          await discardBody(route.req, context.maxBodyBytes);
          const { hosted } = target(context, route.params);
          if (hosted.stdin === undefined) throw new ApiProblem(409, 'STDIN_CLOSED', 'this process has no stdin: start it with pipeStdin or tty');
          await hosted.stdin.end();
          json(200, { status: 'ended' })(route);
        },
      },
    },
    {
      path: `${PROCESS}/interrupt`,
      audit: { POST: 'interrupt' },
      methods: {
        POST: async (route) => {
          await discardBody(route.req, context.maxBodyBytes);
          await target(context, route.params).hosted.process.interrupt();
          // Done, not accepted: the executor took the signal (as terminate, resize and stdin/end answer 200).
          json(200, { status: 'interrupted' })(route);
        },
      },
    },
    {
      path: `${PROCESS}/resize`,
      audit: { POST: 'resize' },
      methods: {
        POST: async (route) => {
          const size = await readJsonBody(route.req, TtySize, context.maxBodyBytes);
          await target(context, route.params).hosted.process.resize(size.rows, size.cols);
          json(200, { rows: size.rows, cols: size.cols })(route);
        },
      },
    },
    {
      path: `${PROCESS}/terminate`,
      audit: { POST: 'terminate' },
      methods: {
        POST: async (route) => {
          await discardBody(route.req, context.maxBodyBytes);
          const running = await target(context, route.params).hosted.process.terminate();
          json(200, { running })(route);
        },
      },
    },
  ];
}
