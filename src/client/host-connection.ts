/**
 * The client's HTTP side: one request to the operator API with the bearer token, retried when that is
 * safe, and every failure a typed {@link HostApiError} (problem+json read back into its code).
 */
import * as E from 'fp-ts/lib/Either';
import type { SchedulerLike } from 'rxjs';
import { HostApiError } from './host-api-error';
import { decodeWith, parseJson } from '../wire/decode';
import { HOST_INSTANCE_HEADER, Problem } from '../wire/operator-api';
import type { HostUrls } from './host-urls';
import { UrlWalk } from './host-urls';
import type { RetryPolicy } from './retry';
import { abortReason, backoffDelay, offlineWait, retryAfterMs, sleep } from './retry';

/** Where and how the client reaches a host. */
export interface HostConnection {
  /**
   * The host's base urls (one, or several replicas of one cluster), without trailing slashes
   * (`http://127.0.0.1:8080`), and which one is used now: shared by every call and stream of a client.
   */
  readonly urls: HostUrls;
  /** The operator token (asked for before each request and each stream's (re)connection, so it can rotate). */
  readonly token: () => string | Promise<string>;
  readonly fetch: typeof fetch;
  readonly policy: RetryPolicy;
  readonly random: () => number;
  /** The clock and timers of the waits, the offline bound and the streams' idle cut. */
  readonly scheduler: SchedulerLike;
  /** A process's events are asked for as the binary stream (see `HostClientOptions.binaryEvents`). */
  readonly binaryEvents?: boolean;
}

/**
 * When a request may be sent again: `idempotent` ones (GET, a start with its Idempotency-Key, a write
 * with its writeId, end, terminate) after any failure the host may not have seen through; `unsafe`
 * ones (interrupt) only when the host said it did not act (429, 503).
 */
export type RetryMode = 'idempotent' | 'unsafe';

/** One request. */
export interface ApiRequest {
  readonly method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE';
  /** The path under the base url, with its query (`/api/v1/environments`). */
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal | undefined;
  readonly retry: RetryMode;
}

/** An answer that was not an error. */
export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly hostInstance: string | undefined;
  /** The base url that answered (one of the client's urls). */
  readonly baseUrl?: string;
}

const decodeProblem = decodeWith(Problem);

/**
 * The typed error of an error answer: its problem+json `code` when it has one the client knows, else by
 * status (a body that is not such a problem, a code outside the closed set, is read as no problem at all).
 */
export async function errorOf(response: Response, what: string): Promise<HostApiError> {
  const hostInstance = response.headers.get(HOST_INSTANCE_HEADER) ?? undefined;
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const problem = decodeProblem(body);
  if (E.isRight(problem)) {
    const detail = problem.right.detail;
    const message = `${what}: ${problem.right.title}${detail === undefined ? '' : `: ${detail}`}`;
    return new HostApiError(problem.right.code, message, response.status, hostInstance, detail === undefined ? undefined : { detail });
  }
  return new HostApiError(response.status === 401 ? 'UNAUTHORIZED' : 'HOST_ERROR', `${what}: HTTP ${response.status}`, response.status, hostInstance);
}

/** Whether an answer's status says the host did not act and asks to come back (429, 503). */
export const isBusy = (status: number): boolean => status === 429 || status === 503;

/** A proxy in between could not reach the host (502, 504): like no answer at all. A 500 is the host's own failure. */
export const isGatewayFailure = (status: number): boolean => status === 502 || status === 504;

/**
 * Sends `request`, retrying as its mode allows, with backoff and jitter, honouring `Retry-After`, until
 * the host has been unreachable (no answer, 502, 504, or 503 after 503) for `maxOfflineMs`; a 429 only
 * slows it down. A connection that drops while a 2xx answer is read
 * counts as no answer. With several urls, an attempt without a usable answer (no answer, 502, 503, 504)
 * moves the client to the next url: tried at once while this round has one untried, else after the
 * backoff (a 503's `Retry-After` is waited for either way: a replica that answers for a process another
 * one owns asks for it). Resolves with a 2xx answer; rejects with HostApiError (the host's code;
 * `HOST_UNREACHABLE`; `DECODE_FAILED` for a 2xx body that is not JSON), with what the token function
 * threw, or with `signal.reason` when `signal` aborts, whether the request is out or its answer is being read.
 */
export async function send(connection: HostConnection, request: ApiRequest): Promise<ApiAnswer> {
  const what = `${request.method} ${request.path.split('?')[0] ?? ''}`;
  let failures = 0;
  const offline = new OfflineBound(connection.policy, what, connection.scheduler);
  const now = (): number => connection.scheduler.now();
  const walk = new UrlWalk(connection.urls);
  for (;;) {
    // An aborted call sends nothing more.
    if (isAborted(request.signal)) throw abortReason(request.signal);
    let response: Response | undefined;
    let cause: unknown;
    const url = walk.url;
    try {
      // The token comes first: a token function that fails fails the call with its own error.
      const options = await init(connection, request);
      response = await connection.fetch(`${url}${request.path}`, options);
    } catch (error: unknown) {
      if (isAborted(request.signal)) throw abortReason(request.signal);
      if (error instanceof TokenError) throw error.cause;
      cause = error;
    }
    if (response !== undefined && response.ok) {
      const text = await readText(response, request.signal);
      if (typeof text === 'string') return { ...answerOf(response, text, what), baseUrl: url };
      // The connection dropped while the answer was read: no answer after all.
      response = undefined;
      cause = text.failure;
    }
    if (response !== undefined && isBusy(response.status)) {
      const retryAfter = retryAfterMs(response.headers.get('retry-after'), now);
      if (response.status === 429) {
        const delay = retryAfter ?? backoffDelay(failures, connection.policy, connection.random);
        failures += 1;
        // Only asks to slow down: the host answers and acts on other calls.
        offline.reached();
        walk.answered();
        await response.body?.cancel();
        await sleep(delay, request.signal, connection.scheduler);
        continue;
      }
      // A host that keeps answering 503 (its environment recovering or failed, its streams full, stopping)
      // is unavailable like one that does not answer, as an event stream holds it: bounded by
      // maxOfflineMs, then HOST_UNREACHABLE with the host's last answer as its cause. Without the bound
      // a call could wait for ever.
      // Another replica may answer (a draining one answers 503): the next url, at once unless the host
      // said when to come back (a replica answering for a process another owns does) or every url of
      // this round said 503.
      const busy = await errorOf(response, what);
      const untried = walk.failed(url);
      const delay = retryAfter ?? (untried ? 0 : backoffDelay(failures, connection.policy, connection.random));
      if (retryAfter !== undefined || !untried) failures += 1;
      const bounded = offline.next(delay, busy);
      if (bounded > 0) await sleep(bounded, request.signal, connection.scheduler);
      continue;
    }
    const retryable = request.retry === 'idempotent' && (response === undefined || isGatewayFailure(response.status));
    if (!retryable) throw response === undefined ? unreachable(what, cause) : await errorOf(response, what);
    await response?.body?.cancel();
    if (walk.failed(url)) {
      // Another url of this round is untried: at once (still within the offline bound).
      offline.next(0, cause);
      continue;
    }
    await sleep(offline.next(backoffDelay(failures, connection.policy, connection.random), cause), request.signal, connection.scheduler);
    failures += 1;
  }
}

/**
 * `ask()`'s answer, asking again each time fetch gave up waiting for the answer's headers (undici waits
 * 300 s): a long wait is asked again. Any other failure rejects as it is.
 */
export async function longPoll(ask: () => Promise<ApiAnswer>): Promise<ApiAnswer> {
  for (;;) {
    try {
      return await ask();
    } catch (error: unknown) {
      if (!headersTimedOut(error)) throw error;
    }
  }
}

/** Whether `error` is fetch giving up on an answer's headers (a long wait, not a host that is gone). */
function headersTimedOut(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; typeof cause === 'object' && cause !== null && depth < 4; depth += 1) {
    if ('code' in cause && cause.code === 'UND_ERR_HEADERS_TIMEOUT') return true;
    cause = 'cause' in cause ? cause.cause : undefined;
  }
  return false;
}

/** Whether `signal` is aborted (a function: the flag changes under our feet, which narrowing does not know). */
const isAborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

/** A 2xx answer's text; `{ failure }` when the connection dropped while it was read; `signal.reason` when `signal` aborted. */
async function readText(response: Response, signal: AbortSignal | undefined): Promise<string | { readonly failure: unknown }> {
  try {
    return await response.text();
  } catch (failure: unknown) {
    if (signal?.aborted === true) throw abortReason(signal);
    return { failure };
  }
}

/** A 2xx answer with its JSON body (none when empty); DECODE_FAILED when the body is not JSON. */
function answerOf(response: Response, text: string, what: string): ApiAnswer {
  const hostInstance = response.headers.get(HOST_INSTANCE_HEADER) ?? undefined;
  if (text === '') return { status: response.status, body: undefined, hostInstance };
  const body = parseJson(text);
  if (E.isRight(body)) return { status: response.status, body: body.right, hostInstance };
  const message = `${what}: the host answered ${response.status} with something else than JSON: ${body.left.message}`;
  throw new HostApiError('DECODE_FAILED', message, response.status, hostInstance);
}

/** What a token function threw (or rejected with), as `cause`: the call fails with it, it is not retried. */
export class TokenError extends Error {
  override readonly name = 'TokenError';
  constructor(cause: unknown) {
    super('the token function failed', { cause });
  }
}

/** The current token; a failing token function as {@link TokenError}. */
async function tokenOf(connection: HostConnection): Promise<string> {
  try {
    return await connection.token();
  } catch (error: unknown) {
    throw new TokenError(error);
  }
}

/** The fetch options of a request: the token (asked for now), JSON, the signal. Rejects with {@link TokenError}. */
export async function init(connection: HostConnection, request: Pick<ApiRequest, 'method' | 'body' | 'headers' | 'signal'>): Promise<RequestInit> {
  const headers: Record<string, string> = { authorization: `Bearer ${await tokenOf(connection)}`, ...request.headers };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  return {
    method: request.method,
    headers,
    ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  };
}

/** The host could not be reached (for `afterMs` when given). */
export function unreachable(what: string, cause: unknown, afterMs?: number): HostApiError {
  const reason = cause instanceof Error ? cause.message : 'no answer';
  const how = afterMs === undefined ? '' : ` for over ${afterMs / 1000} s`;
  return new HostApiError('HOST_UNREACHABLE', `${what}: the host is unreachable${how} (${reason})`, undefined, undefined, { cause });
}

/**
 * How long one call or stream has found the host unreachable (on `scheduler`'s clock), and the waits
 * that bound it: each wait is cut so that the last attempt comes when `maxOfflineMs` runs out, and then
 * it gives up. One per call or stream; `reached()` when the host answered.
 */
export class OfflineBound {
  private since: number | undefined;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly what: string,
    private readonly scheduler: SchedulerLike,
  ) {}

  /** The host answered: the bound starts again at the next failure. */
  reached(): void {
    this.since = undefined;
  }

  /** The wait before the next attempt: `delayMs`, cut to what is left of the bound. Throws HOST_UNREACHABLE (with `cause`) once nothing is left. */
  next(delayMs: number, cause: unknown): number {
    const now = this.scheduler.now();
    this.since ??= now;
    const wait = offlineWait(delayMs, this.since, this.policy.maxOfflineMs, now);
    if (wait === undefined) throw unreachable(this.what, cause, this.policy.maxOfflineMs);
    return wait;
  }
}
