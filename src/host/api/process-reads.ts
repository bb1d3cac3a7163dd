/**
 * Reading a process's output through the operator API, always through the host's log store port: its
 * events (SSE, from a seq on, then live) and its output bytes (`…/log`, from a log read at the client's
 * pace), with the query parameters both take.
 */
import type { IncomingMessage } from 'node:http';
import { API_PREFIX, HOST_INSTANCE_HEADER } from '../../wire/operator-api';
import type { ApiContext } from './api-context';
import { discardBody } from './json-body';
import { afterLogEnd } from './log-continuation';
import { logSelectionOf, sendLogBytes } from './log-bytes';
import { streamLogEvents } from './log-event-stream';
import { TICKET_PARAM } from './log-tickets';
import { ApiProblem } from './problem';
import { executorWindowOf } from './event-sources';
import { streamProcessEvents } from './process-event-stream';
import { processResourceOf, target } from './process-targets';
import { sendApiJson } from './responses';
import type { RouteContext } from './router';
import type { EventSink } from './sse-stream';

const SEQ = /^(0|[1-9][0-9]{0,15})$/;

/** The one value of query parameter `name`, if given; 400 when it is given more than once. */
export function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw new ApiProblem(400, 'INVALID_REQUEST', `${name} may be given once`);
  return values[0];
}

/** `?follow=`: `true` (the default) or `false`, nothing else. */
export function followOf(query: URLSearchParams): boolean {
  const raw = single(query, 'follow');
  if (raw === undefined) return true;
  if (raw !== 'true' && raw !== 'false') throw new ApiProblem(400, 'INVALID_REQUEST', 'follow must be true or false');
  return raw === 'true';
}

/** The seq to resume after: `?after=` wins over `Last-Event-ID`; 0 when neither is given. */
export function resumeAfter(req: IncomingMessage, query: URLSearchParams): number {
  const raw = single(query, 'after') ?? (typeof req.headers['last-event-id'] === 'string' ? req.headers['last-event-id'] : undefined);
  if (raw === undefined || raw === '') return 0;
  if (!SEQ.test(raw.trim())) throw new ApiProblem(400, 'INVALID_REQUEST', 'after / Last-Event-ID must be a seq (a non-negative integer)');
  return Number(raw.trim());
}

/** Streams a process's events after a seq into a sink (see {@link processEventPump}). */
export type ProcessEventPump = (sink: EventSink, afterSeq: number, follow: boolean) => void;

/**
 * What streams the events of `processId` of `environmentId`, found before any byte is written (so a
 * process that is not there is an ApiProblem: 404 `PROCESS_NOT_FOUND`, or the environment's 404 / 503).
 * A log the store lets readers read at their own pace is read so: every process the store holds (one of
 * an earlier run of the host too; a process found running before a restart, `unknown`, is waited for
 * while its executor is expected back). A live log (memory) is the history of a live process, with its
 * executor's window behind it for what the history no longer holds.
 */
export async function processEventPump(context: ApiContext, environmentId: string, processId: string): Promise<ProcessEventPump> {
  const key = { environmentId, processId };
  const reader = await context.logs.openReader(key);
  if (reader?.pace === 'own') return (sink, after, follow) => streamLogEvents(reader, sink, after, { follow, afterEnd: afterLogEnd(context.environments, context.logs, key) });
  const { hosted } = await target(context, { environmentId, processId });
  // A process the store let go of (its stream failed) is read from its own history, which it still holds.
  const sources = { history: reader?.history ?? hosted.process, window: executorWindowOf(hosted.process) };
  return (sink, after, follow) => streamProcessEvents(sources, sink, after, { follow, stallMs: context.stallMs, scheduler: context.scheduler });
}

/**
 * `GET …/log`: the process's output bytes from a log read at the client's pace (see log-bytes). A host
 * whose store has no such log (memory) keeps none: 409 `LOG_READ_FAILED` for a process it lists (read the
 * events route instead).
 */
export async function sendLog(context: ApiContext, { req, res, params, query }: RouteContext): Promise<void> {
  const selection = logSelectionOf(query);
  const reader = await context.logs.openReader({ environmentId: params['environmentId'] ?? '', processId: params['processId'] ?? '' });
  // Saved as a file by a browser that navigated here (with a ticket); the id is a safe id, quotable as it is.
  const disposition = `attachment; filename="${params['processId'] ?? 'output'}.log"`;
  if (reader?.pace === 'own') return sendLogBytes(req, res, reader, selection, { [HOST_INSTANCE_HEADER]: context.hostInstance, 'content-disposition': disposition });
  await target(context, params);
  throw new ApiProblem(409, 'LOG_READ_FAILED', 'this host keeps no output log of the process (it runs without a data dir): read its events instead');
}

/**
 * `POST …/log/tickets`: a download ticket for the caller (see log-tickets), for a process the host lists
 * (live or stored; else 404). Answers 201 `{ url, expiresAt }`: the log's path with the ticket (a
 * reference relative to the host's origin) and when the ticket expires (ISO-8601), once the ticket store
 * keeps it (503 when a shared one does not answer).
 */
export async function issueTicket(context: ApiContext, { req, res, params, caller }: RouteContext): Promise<void> {
  await discardBody(req, context.maxBodyBytes);
  const resource = await processResourceOf(context, params);
  const { ticket, expiresAt } = await context.tickets.issue(caller, resource.environmentId, resource.id);
  const url = `${API_PREFIX}/environments/${encodeURIComponent(resource.environmentId)}/processes/${encodeURIComponent(resource.id)}/log?${TICKET_PARAM}=${ticket}`;
  sendApiJson(res, context.hostInstance, 201, { url, expiresAt: new Date(expiresAt).toISOString() });
}
