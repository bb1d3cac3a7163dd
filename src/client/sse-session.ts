/**
 * The reconnect loop both of the client's event streams share: open the stream, read it, open it again
 * when it ends or fails; back off (with jitter, or as `Retry-After` says) while the host is busy or
 * unreachable, and give up with `HOST_UNREACHABLE` once it stayed unreachable past `maxOfflineMs`.
 * A session with a consumer that can fall behind (`room`) has its body read only while that consumer
 * has room; the idle cut does not run meanwhile (the silence is ours, not the host's).
 */
import type { Subscription } from 'rxjs';
import { Observable } from 'rxjs';
import { HostApiError } from './host-api-error';
import type { HostConnection } from './host-connection';
import { errorOf, init, isBusy, isGatewayFailure, OfflineBound, TokenError } from './host-connection';
import { UrlWalk } from './host-urls';
import { abortReason, backoffDelay, retryAfterMs, sleep } from './retry';
import * as E from 'fp-ts/lib/Either';
import { decodeWith, parseJson } from '../wire/decode';
import { RESTART_EVENT, RestartEventData } from '../wire/operator-api';
import { BINARY_EVENTS_MEDIA_TYPE, isBinaryEvents, SSE_MEDIA_TYPE } from '../wire/binary-events';
import type { OutputFrame } from './binary-reader';
import { EventFrameError, readBinaryEvents } from './binary-reader';
import type { SseMessage, SseReadHooks } from './sse-reader';
import { readSse } from './sse-reader';

/** What one stream does with its connection's life. */
export interface SseSession {
  /** The path and query of the next attempt (e.g. with the seq to resume after). */
  path(): string;
  /** A stream opened (200): its response, for the host instance that serves it. */
  onOpen(response: Response): void;
  /** Each whole event; throwing a HostApiError ends the session with it. */
  onMessage(message: SseMessage): void;
  /**
   * Ask for the binary event stream (`wire/binary-events.ts`) and take its output frames in
   * {@link onOutput}: each attempt's `Accept` names its media type before SSE's. The host may still answer
   * SSE (an older one), which is read as such. @default false: `Accept: text/event-stream`
   */
  readonly binary?: boolean;
  /** Each output frame of a binary stream (with `binary`; a binary answer to a session without both is DECODE_FAILED); throwing a HostApiError ends the session with it. */
  onOutput?(output: OutputFrame): void;
  /** The host ended the stream (its body ended whole; a dropped connection is not an end). */
  onEnd(): void;
  /** Whether the session is over: a final event came, or nothing more is wanted. Checked after each event too: reading stops there. */
  finished(): boolean;
  /** A progress mark (the last seq): an attempt that moved it resets the backoff. */
  progress(): number;
  /** The error for a refusal (a non-retryable answer) by the host. */
  refusal(response: Response): Promise<HostApiError>;
  /**
   * Asked before each read of the body: `undefined` when the consumer has room for more events, else a
   * promise that resolves once it has. Absent: the body is read as fast as it comes.
   */
  room?(): Promise<void> | undefined;
  /**
   * Asked after each event: a number when the session wants its stream opened again after that many
   * ms (a part of it the host could not give yet, as a process whose environment is still starting);
   * reading stops there, and neither `onEnd` nor `onDrop` is called for it (the session says why itself).
   * Absent or `undefined`: read on.
   */
  againAfter?(): number | undefined;
  /**
   * A connection dropped (cut, ended by the host, the host restarting) or could not be made (refused,
   * busy, unreachable), and the loop will try again: `reason` says why, in words. Not called once the
   * session is finished or stopped, nor for a refusal (that ends the session).
   */
  onDrop?(reason: string): void;
}

/** The `Accept` of a session that asks for the binary stream: it, else SSE (what an older host answers anyway). */
const BINARY_ACCEPT = `${BINARY_EVENTS_MEDIA_TYPE}, ${SSE_MEDIA_TYPE};q=0.5`;

/** The longest wait a host's come-back event is taken at its word for (a larger `retryMs` is capped). */
const MAX_COME_BACK_MS = 30_000;

/**
 * Runs `session` until it is finished (resolves) or cannot go on (rejects); `signal` stops it quietly.
 * A stream that ends with the host's come-back event (`event: restart`, the host stops gracefully) is
 * not an end for the session (`onEnd` is not called) nor a failure: it is opened again after the
 * event's `retryMs` (at most 30 s), resuming by the session's path.
 * With several urls (replicas), a stream that drops, comes back, or cannot be opened (no answer,
 * 502/503/504) is opened again on the next url by the session's path (its last seq): at once while the
 * round has an untried url, else after the backoff (or come-back wait) as with one url.
 */
export async function runSse(connection: HostConnection, what: string, session: SseSession, signal: AbortSignal): Promise<void> {
  let failures = 0;
  const { scheduler } = connection;
  const offline = new OfflineBound(connection.policy, what, scheduler);
  const wait = (ms: number): Promise<void> => sleep(ms, signal, scheduler);
  const walk = new UrlWalk(connection.urls);
  while (!session.finished()) {
    if (signal.aborted) return; // a move to another url does not wait: the caller's abort is seen here
    const url = walk.url;
    let response: Response | undefined;
    let cause: unknown;
    // One attempt's own abort: the caller's signal, or a stream gone silent past streamIdleMs.
    const attempt = new AbortController();
    const stopAttempt = (): void => attempt.abort();
    let idle: Subscription | undefined;
    // The caller's abort leaves no timer behind, at once (the attempt may still be opening).
    const stopAll = (): void => {
      idle?.unsubscribe();
      stopAttempt();
    };
    signal.addEventListener('abort', stopAll, { once: true });
    const heard = (): void => {
      idle?.unsubscribe();
      idle = scheduler.schedule(stopAttempt, connection.policy.streamIdleMs);
    };
    const endAttempt = (): void => {
      idle?.unsubscribe();
      signal.removeEventListener('abort', stopAll);
    };
    try {
      heard();
      // The token is asked for at each (re)connection; a token function that fails ends the stream with its error.
      const options = await init(connection, { method: 'GET', signal: attempt.signal, headers: { accept: session.binary === true ? BINARY_ACCEPT : SSE_MEDIA_TYPE } });
      response = await connection.fetch(`${url}${session.path()}`, options);
    } catch (error: unknown) {
      if (signal.aborted) {
        endAttempt();
        return;
      }
      if (error instanceof TokenError) {
        endAttempt();
        throw error.cause;
      }
      cause = error;
    }
    if (response?.status === 200) {
      offline.reached();
      session.onOpen(response);
      const before = session.progress();
      let comeBackMs: number | undefined;
      const onMessage = (message: SseMessage): void => {
        if (message.event === RESTART_EVENT) comeBackMs = comeBackDelay(message.data);
        else handle(session, message, what);
      };
      let dropped = 'the host ended the stream';
      try {
        // Nothing follows a come-back event: reading stops there.
        const stop = (): boolean => comeBackMs !== undefined || session.finished() || session.againAfter?.() !== undefined;
        await readEvents(response, session, onMessage, { stop, onBytes: heard, room: () => roomFor(session, attempt.signal, idle, heard) }, what);
        if (comeBackMs === undefined && session.againAfter?.() === undefined) session.onEnd();
      } catch (error: unknown) {
        if (signal.aborted || error instanceof HostApiError) throw error;
        dropped = attempt.signal.aborted
          ? `no byte from the host for ${connection.policy.streamIdleMs} ms`
          : error instanceof EventFrameError
            ? error.message
            : `the connection dropped: ${messageOf(error)}`;
      } finally {
        endAttempt();
      }
      const again = session.againAfter?.();
      if (again !== undefined && comeBackMs === undefined && !session.finished()) {
        await response.body?.cancel().catch(() => undefined);
        await wait(again);
        continue;
      }
      if (comeBackMs !== undefined) {
        failures = 0;
        if (!session.finished()) {
          session.onDrop?.('the host is restarting');
          walk.answered(); // another replica answers at once; the only host is waited for
          if (!walk.failed(url)) await wait(comeBackMs);
        }
        continue;
      }
      if (!session.finished()) session.onDrop?.(dropped);
      // A cut after progress reconnects at once (on the next url); streams ending without progress back off.
      const progressed = session.progress() > before;
      failures = progressed ? 0 : failures + 1;
      if (progressed) walk.answered();
      const untried = walk.failed(url);
      if (failures > 0 && !untried && !session.finished()) await wait(backoffDelay(failures - 1, connection.policy, connection.random));
      continue;
    }
    endAttempt();
    if (response !== undefined && isBusy(response.status)) {
      session.onDrop?.(`the host is busy (HTTP ${response.status})`);
      await response.body?.cancel();
      // A host that keeps answering 503 (its environment failed, its streams are full) is unavailable
      // like one that does not answer; 429 only asks to slow down.
      const retryAfter = retryAfterMs(response.headers.get('retry-after'), () => scheduler.now());
      if (response.status === 429) {
        walk.answered();
        await wait(retryAfter ?? backoffDelay(failures++, connection.policy, connection.random));
        continue;
      }
      // The next url: at once unless the host said when (a replica for a process another owns) or the round failed.
      const untried = walk.failed(url);
      const delay = retryAfter ?? (untried ? 0 : backoffDelay(failures, connection.policy, connection.random));
      if (retryAfter === undefined && !untried) failures += 1;
      const bounded = offline.next(delay, cause);
      if (bounded > 0) await wait(bounded);
      continue;
    }
    if (response !== undefined && !isGatewayFailure(response.status)) throw await session.refusal(response);
    session.onDrop?.(response === undefined ? `the host is unreachable: ${messageOf(cause)}` : `a gateway could not reach the host (HTTP ${response.status})`);
    await response?.body?.cancel();
    if (walk.failed(url) && offline.next(0, cause) === 0) continue; // an untried url of this round: at once, within the bound
    await wait(offline.next(backoffDelay(failures++, connection.policy, connection.random), cause));
  }
}

/**
 * An error's message, and its cause's (fetch's `TypeError: fetch failed` says why only there). Read by
 * shape, not `instanceof`: fetch's errors may come from another realm.
 */
function messageOf(error: unknown): string {
  const own = textOf(error) ?? String(error);
  const cause = typeof error === 'object' && error !== null && 'cause' in error ? textOf(error.cause) : undefined;
  return cause === undefined || cause === '' ? own : `${own} (${cause})`;
}

/** The `message` of an error-like value, if it has one. */
const textOf = (value: unknown): string | undefined =>
  typeof value === 'object' && value !== null && 'message' in value && typeof value.message === 'string' ? value.message : undefined;

/** The wait a come-back event asks for (its `retryMs`, capped); 1 s when its data cannot be read. */
function comeBackDelay(data: string): number {
  const parsed = parseJson(data);
  const decoded = E.isRight(parsed) ? decodeWith(RestartEventData)(parsed.right) : parsed;
  return E.isRight(decoded) ? Math.min(decoded.right.retryMs, MAX_COME_BACK_MS) : 1_000;
}

/**
 * Reads one answer by its `Content-Type`: the binary event stream (`wire/binary-events.ts`) when the host
 * answered one, else SSE (an older host answers SSE whatever was asked). A binary answer to a session
 * that did not ask for one is DECODE_FAILED.
 */
function readEvents(response: Response, session: SseSession, onMessage: (message: SseMessage) => void, hooks: SseReadHooks, what: string): Promise<void> {
  if (!isBinaryEvents(response.headers.get('content-type'))) return readSse(response, onMessage, hooks);
  const onOutput = session.binary === true ? session.onOutput?.bind(session) : undefined;
  if (onOutput === undefined) return Promise.reject(new HostApiError('DECODE_FAILED', `${what}: the host answered a binary stream that was not asked for`, undefined, undefined));
  return readBinaryEvents(response, { message: onMessage, output: (frame) => guarded(() => onOutput(frame), what) }, hooks);
}

/**
 * Hands `message` to the session. What its handler throws is the session's own failure, final: a
 * HostApiError as it is, anything else as `DECODE_FAILED` with it as the cause. Only the connection's
 * failures are retried (opening the stream again would bring the same event, and the same failure).
 */
function handle(session: SseSession, message: SseMessage, what: string): void {
  guarded(() => session.onMessage(message), what);
}

/** Runs a handler of the session: what it throws is final (see {@link handle}). */
function guarded(handler: () => void, what: string): void {
  try {
    handler();
  } catch (error: unknown) {
    if (error instanceof HostApiError) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new HostApiError('DECODE_FAILED', `${what}: an event could not be handled: ${why}`, undefined, undefined, { cause: error });
  }
}

/**
 * The session's `room()` for one attempt: while the consumer is behind, the idle cut is off (`idle` is
 * unsubscribed, and `heard` arms it again once there is room). An abort of the attempt ends the wait
 * with a rejection: nothing more is read.
 */
function roomFor(session: SseSession, signal: AbortSignal, idle: Subscription | undefined, heard: () => void): Promise<void> | undefined {
  const wait = session.room?.();
  if (wait === undefined) return undefined;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  idle?.unsubscribe();
  return new Promise<void>((resolve, reject) => {
    const aborted = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', aborted, { once: true });
    const done = (): void => {
      signal.removeEventListener('abort', aborted);
      resolve();
    };
    wait.then(done, done);
  }).then(heard);
}

/** The default refusal: the host's problem, typed. */
export const refusalOf = (what: string) => (response: Response): Promise<HostApiError> => errorOf(response, what);

/**
 * A stream of what `run` emits, as a cold Observable: `run` gets an `emit` and a signal that aborts on
 * unsubscribe. Completes when `run` resolves; errors with what it rejects with, unless the subscriber
 * already left. Every event stream of the client (`environments$`, `events$`, `watch$`) is one.
 */
export function sse$<T>(run: (emit: (value: T) => void, signal: AbortSignal) => Promise<void>): Observable<T> {
  return new Observable<T>((subscriber) => {
    const abort = new AbortController();
    run((value) => subscriber.next(value), abort.signal).then(
      () => subscriber.complete(),
      (error: unknown) => {
        if (!abort.signal.aborted) subscriber.error(error);
      },
    );
    return () => abort.abort();
  });
}
