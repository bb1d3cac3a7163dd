/**
 * The processes side of the operator API: start, list, get and release processes; their events as SSE
 * and their output bytes (`/log`; see `./process-reads`); their stdin (written once per `writeId`, ended
 * once); interrupt and terminate; waiting for an exit.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeCanonical } from '../../wire/base64';
import { API_PREFIX, IDEMPOTENCY_KEY_HEADER, StartProcessRequest, StdinWriteRequest, TtySize } from '../../wire/operator-api';
import type { ApiContext } from './api-context';
import { environmentOf, refuseIfElsewhere } from './api-context';
import { discardBody, readJsonBody } from './json-body';
import { ApiProblem } from './problem';
import { followOf, issueTicket, processEventPump, resumeAfter, sendLog } from './process-reads';
import type { Target } from './process-targets';
import { processList, processResourceOf, target } from './process-targets';
import { sendApiJson, sendEmpty } from './responses';
import { isoOf, settledOnce, storedWaitAnswer } from './process-waits';
import { storedProcess } from './stored-processes';
import type { Route, RouteContext } from './router';

const PROCESSES = `${API_PREFIX}/environments/{environmentId}/processes`;
const PROCESS = `${PROCESSES}/{processId}`;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

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
  await refuseIfElsewhere(context, environmentId);
  const environment = environmentOf(context, environmentId);
  const started = await context.processes.start(environmentId, environment, request, idempotency, caller.name);
  const resource = await context.processes.startedResource(environment, started);
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
  const found = await target(context, params);
  if (found.hosted.stdin === undefined) throw new ApiProblem(409, 'STDIN_CLOSED', 'this process has no stdin: start it with pipeStdin or tty');
  await found.hosted.stdin.write(request.writeId, bytes);
  sendApiJson(res, context.hostInstance, 200, { writeId: request.writeId, status: 'accepted' });
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
    found = await target(context, params);
  } catch (error: unknown) {
    const stored = await storedProcess(context, environmentId, processId);
    if (stored === undefined || !(error instanceof ApiProblem)) throw error;
    if (stored.state === 'unknown' && context.environments.awaitingTakeBack(environmentId)) {
      // Its executor may still take it back: look again once that settled (or the host stops).
      await settledOnce(context.environments.takeBackSettled(environmentId));
      if (res.destroyed) return;
      return answerWait(context, res, params);
    }
    sendApiJson(res, context.hostInstance, 200, storedWaitAnswer(stored, isoOf((await context.logs.meta(key))?.exitedAt)));
    return;
  }
  // The exit as this host saw it while it tracks the process (the resource shows the same), else the store's.
  const exitedAt = async (): Promise<number | null | undefined> => context.processes.timesOf(processId)?.exitedAt ?? (await context.logs.meta(key))?.exitedAt;
  context.waits.waitFor(res, context.hostInstance, found.hosted.process, exitedAt);
}

/** The routes under `/api/v1/environments/{environmentId}/processes`. */
export function processRoutes(context: ApiContext): Route[] {
  const json = (status: number, body: unknown) => ({ res }: RouteContext) => sendApiJson(res, context.hostInstance, status, body);
  return [
    {
      path: PROCESSES,
      audit: { POST: 'start' },
      owner: ['POST'],
      methods: {
        GET: async ({ res, params }) => {
          sendApiJson(res, context.hostInstance, 200, { processes: await processList(context, params['environmentId'] ?? '') });
        },
        POST: (route) => start(context, route),
      },
    },
    {
      path: PROCESS,
      audit: { DELETE: 'release' },
      owner: ['DELETE'],
      methods: {
        GET: async ({ res, params }) => {
          sendApiJson(res, context.hostInstance, 200, await processResourceOf(context, params));
        },
        DELETE: async ({ res, params }) => {
          const { hosted } = await target(context, params);
          const state = hosted.process.state;
          if (state === 'running' || state === 'exited') throw new ApiProblem(409, 'PROCESS_RUNNING', 'the process has not closed: terminate it first');
          hosted.process.release();
          sendEmpty(res, context.hostInstance, 204);
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
          // SSE, or the binary stream when the request's Accept asks for it.
          pump(context.hub.open(res, caller.name, true), after, follow);
        },
      },
    },
    // A wait changes nothing: a view token may wait too.
    { path: `${PROCESS}/wait`, reads: ['POST'], owner: ['POST'], methods: { POST: (route) => waitRoute(context, route) } },
    // A browser downloads by navigating, without a header: a ticket (made below) stands for the token.
    {
      path: `${PROCESS}/log`,
      ticket: async (ticket, params) => context.tickets.redeem(ticket, params['environmentId'] ?? '', params['processId'] ?? ''),
      methods: { GET: (route) => sendLog(context, route) },
    },
    // Making a ticket changes nothing: a view token may download too.
    { path: `${PROCESS}/log/tickets`, reads: ['POST'], methods: { POST: (route) => issueTicket(context, route) } },
    { path: `${PROCESS}/stdin`, audit: { POST: 'stdin' }, owner: ['POST'], methods: { POST: (route) => writeStdin(context, route) } },
    {
      path: `${PROCESS}/stdin/end`,
      audit: { POST: 'stdin end' },
      owner: ['POST'],
      methods: {
        POST: async (route) => {
          await discardBody(route.req, context.maxBodyBytes);
          const { hosted } = await target(context, route.params);
          if (hosted.stdin === undefined) throw new ApiProblem(409, 'STDIN_CLOSED', 'this process has no stdin: start it with pipeStdin or tty');
          await hosted.stdin.end();
          json(200, { status: 'ended' })(route);
        },
      },
    },
    {
      path: `${PROCESS}/interrupt`,
      audit: { POST: 'interrupt' },
      owner: ['POST'],
      methods: {
        POST: async (route) => {
          await discardBody(route.req, context.maxBodyBytes);
          await (await target(context, route.params)).hosted.process.interrupt();
          // Done, not accepted: the executor took the signal (as terminate, resize and stdin/end answer 200).
          json(200, { status: 'interrupted' })(route);
        },
      },
    },
    {
      path: `${PROCESS}/resize`,
      audit: { POST: 'resize' },
      owner: ['POST'],
      methods: {
        POST: async (route) => {
          const size = await readJsonBody(route.req, TtySize, context.maxBodyBytes);
          await (await target(context, route.params)).hosted.process.resize(size.rows, size.cols);
          json(200, { rows: size.rows, cols: size.cols })(route);
        },
      },
    },
    {
      path: `${PROCESS}/terminate`,
      audit: { POST: 'terminate' },
      owner: ['POST'],
      methods: {
        POST: async (route) => {
          await discardBody(route.req, context.maxBodyBytes);
          const running = await (await target(context, route.params)).hosted.process.terminate();
          json(200, { running })(route);
        },
      },
    },
  ];
}
