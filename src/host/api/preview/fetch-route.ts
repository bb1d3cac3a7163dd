/**
 * `POST /api/v1/environments/{environmentId}/fetch`: a request made from inside the environment for a
 * program (`HostClient.environment(id).fetch`, an MCP client). The body is a JSON `FetchEnvelope` (the
 * target's url, method, headers and base64 body); the answer is 200 with the target's body streamed and
 * its status, headers, final url and whether it was redirected in the `exec-rx-fetch-*` headers, so that a
 * browser never takes the target's `Set-Cookie` for the host's. The target goes through the host's allow
 * list, redirects are followed hop by hop and each hop checked (the library's `execFetch`), and each hop's
 * wait for its head takes a slot of the environment's line (`PreviewTraffic.headSlot`).
 */
import type { SchedulerLike } from 'rxjs';
import { HttpRequestTooLargeError, RpcError } from '../../../errors';
import { execFetch } from '../../../http/exec-fetch';
import type { HttpTargetPolicy } from '../../../http/target-policy';
import { FETCH_HEADERS_HEADER, FETCH_REDIRECTED_HEADER, FETCH_STATUS_HEADER, FETCH_URL_HEADER, FetchEnvelope } from '../../../wire/http-api';
import { HOST_INSTANCE_HEADER } from '../../../wire/operator-api';
import type { ApiContext } from '../api-context';
import { environmentOf, refuseIfElsewhere } from '../api-context';
import { clientGone } from '../files/files-context';
import { readJsonBody } from '../json-body';
import { ApiProblem } from '../problem';
import type { RouteContext } from '../router';
import type { HttpSettings } from './http-settings';
import type { PreviewObserver, PreviewTraffic } from './preview-traffic';

/** What the fetch route needs. */
export interface FetchRouteDeps {
  readonly api: ApiContext;
  readonly settings: HttpSettings;
  readonly policy: HttpTargetPolicy;
  readonly traffic: PreviewTraffic;
  readonly observer?: PreviewObserver | undefined;
}

/** Answers one fetch (see the module's doc). Rejects with an ApiProblem before the answer's head; after it, a failure cuts the answer. */
export async function fetchThrough(deps: FetchRouteDeps, route: RouteContext): Promise<void> {
  const { api, settings } = deps;
  const { req, res, params } = route;
  const environmentId = params['environmentId'] ?? '';
  await refuseIfElsewhere(api, environmentId);
  // The envelope carries the body in base64: 4/3 of the body limit, and room for the rest.
  const envelope = await readJsonBody(req, FetchEnvelope, Math.ceil((settings.maxBodyBytes * 4) / 3) + 256 * 1024);
  const environment = environmentOf(api, environmentId);
  const body = envelope.bodyBase64 === undefined ? undefined : Buffer.from(envelope.bodyBase64, 'base64');
  if (envelope.timeoutMs !== undefined && !(Number.isSafeInteger(envelope.timeoutMs) && envelope.timeoutMs >= 1)) {
    throw new ApiProblem(400, 'INVALID_REQUEST', `timeoutMs is a whole number of milliseconds >= 1 (got ${envelope.timeoutMs})`);
  }
  const timeoutMs = Math.min(envelope.timeoutMs ?? settings.timeoutMs, settings.streamTimeoutMs);
  let origin = 'a malformed url';
  try {
    origin = new URL(envelope.url).origin;
  } catch {
    // The policy refuses it below, with the reason.
  }
  if (route.audit !== undefined) route.audit.target = origin;
  const signal = clientGone(res);
  const started = api.scheduler.now();
  let response: Response;
  try {
    response = await execFetch(
      environment.getHttpClient(),
      envelope.url,
      {
        method: envelope.method ?? 'GET',
        headers: envelope.headers ?? [],
        ...(body === undefined ? {} : { body }),
        redirect: envelope.redirect ?? 'follow',
        signal,
        timeoutMs,
      },
      { policy: deps.policy, maxRequestBodyBytes: settings.maxBodyBytes, bufferBytes: settings.bufferBytes, acquire: deps.traffic.headSlot(environmentId, signal) },
    );
  } catch (error: unknown) {
    deps.observer?.ended('fetch', 0, 'refused');
    throw failure(error, api.scheduler, started, timeoutMs, origin);
  }
  const headers: [string, string][] = [];
  response.headers.forEach((value, name) => headers.push([name, value]));
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'cache-control': 'no-store',
    [HOST_INSTANCE_HEADER]: api.hostInstance,
    [FETCH_STATUS_HEADER]: String(response.status),
    [FETCH_HEADERS_HEADER]: Buffer.from(JSON.stringify(headers)).toString('base64url'),
    [FETCH_URL_HEADER]: encodeURI(response.url),
    [FETCH_REDIRECTED_HEADER]: String(response.redirected),
  });
  await pipeBody(response, res, deps.observer);
}

/** Streams the body at the client's pace (the library's bounded buffer holds what the executor sends meanwhile); a failure cuts the answer. */
async function pipeBody(response: Response, res: RouteContext['res'], observer: PreviewObserver | undefined): Promise<void> {
  const body = response.body;
  if (body === null) {
    res.end();
    observer?.ended('fetch', 200, 'answered');
    return;
  }
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => {
        const go = (): void => {
          res.off('drain', go);
          res.off('close', go);
          resolve();
        };
        res.on('drain', go);
        res.on('close', go);
      });
      if (res.destroyed) {
        await reader.cancel();
        observer?.ended('fetch', 200, 'client');
        return;
      }
    }
    res.end();
    observer?.ended('fetch', 200, 'answered');
  } catch {
    res.destroy();
    observer?.ended('fetch', 200, 'cut');
  }
}

/** A failure before the head as the API says it: the library's errors by their code; `http/request failed` as 504 past the time bound, else 502. */
function failure(error: unknown, scheduler: SchedulerLike, started: number, timeoutMs: number, origin: string): unknown {
  // The API's code for a body over the limit, as every other route says it.
  if (error instanceof HttpRequestTooLargeError) return new ApiProblem(413, 'BODY_TOO_LARGE', error.message);
  // fetch's own refusals: a redirect under `redirect: 'error'` or past 20 is the target's doing; the rest the request's.
  if (error instanceof TypeError) {
    return /redirect/i.test(error.message) ? new ApiProblem(502, 'PREVIEW_FAILED', error.message) : new ApiProblem(400, 'INVALID_REQUEST', error.message);
  }
  if (!(error instanceof RpcError) || !error.rpcMessage.startsWith('http/request failed')) return error;
  if (scheduler.now() - started >= timeoutMs - 100) return new ApiProblem(504, 'PREVIEW_TIMEOUT', `${origin} sent no answer within ${timeoutMs} ms`);
  return new ApiProblem(502, 'PREVIEW_FAILED', `the environment could not reach ${origin}: ${error.rpcMessage}`);
}
