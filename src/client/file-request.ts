/**
 * One request of the file routes whose answer is not JSON (a download's bytes, a HEAD): sent with the
 * token, retried as `send` retries a GET (no answer, 502, 503, 504, 429, within `maxOfflineMs`), and
 * handed back with its body unread; an error answer is a typed {@link HostApiError}.
 */
import type { HostApiError } from './host-api-error';
import type { HostConnection } from './host-connection';
import type { OfflineBound } from './host-connection';
import { errorOf, init, isBusy, isGatewayFailure, OfflineBound as Bound, TokenError, unreachable } from './host-connection';
import { UrlWalk } from './host-urls';
import { abortReason, backoffDelay, retryAfterMs, sleep } from './retry';

/** A raw request: a path under the base url (with its query) and its headers. */
export interface RawRequest {
  readonly method: 'GET' | 'HEAD';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
}

/**
 * Sends `request` until the host answers something other than busy or unreachable, and resolves with
 * that answer (2xx) with its body unread. Rejects with the host's
 * HostApiError for any other status, `HOST_UNREACHABLE` once `offline` ran out, what the token function
 * threw, or `signal.reason`. `offline` is the caller's bound (one per read, across its resumes).
 */
export async function openRaw(connection: HostConnection, request: RawRequest, what: string, offline: OfflineBound): Promise<Response> {
  const walk = new UrlWalk(connection.urls);
  let failures = 0;
  for (;;) {
    if (request.signal.aborted) throw abortReason(request.signal);
    const url = walk.url;
    let response: Response | undefined;
    let cause: unknown;
    try {
      const options = await init(connection, { method: request.method, headers: request.headers, signal: request.signal });
      response = await connection.fetch(`${url}${request.path}`, options);
    } catch (error: unknown) {
      if (request.signal.aborted) throw abortReason(request.signal);
      if (error instanceof TokenError) throw error.cause;
      cause = error;
    }
    if (response !== undefined && (response.ok)) {
      offline.reached();
      walk.answered();
      return response;
    }
    if (response !== undefined && !isBusy(response.status) && !isGatewayFailure(response.status)) throw await errorOf(response, what);
    let delay = backoffDelay(failures, connection.policy, connection.random);
    let busy: HostApiError | undefined;
    if (response !== undefined) {
      const retryAfter = retryAfterMs(response.headers.get('retry-after'), () => connection.scheduler.now());
      if (retryAfter !== undefined) delay = retryAfter;
      busy = isBusy(response.status) ? await errorOf(response, what) : undefined;
      await response.body?.cancel().catch(() => undefined);
    }
    failures += 1;
    if (response?.status === 429) {
      // Only asks to slow down: the host answers.
      offline.reached();
      walk.answered();
      await sleep(delay, request.signal, connection.scheduler);
      continue;
    }
    const untried = walk.failed(url);
    const wait = offline.next(untried && response?.headers.get('retry-after') == null ? 0 : delay, busy ?? cause ?? unreachable(what, cause));
    if (wait > 0) await sleep(wait, request.signal, connection.scheduler);
  }
}

/** A fresh bound of how long one read may find the host unreachable. */
export const offlineBound = (connection: HostConnection, what: string): OfflineBound => new Bound(connection.policy, what, connection.scheduler);
