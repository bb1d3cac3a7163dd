import type { Observable, SchedulerLike } from 'rxjs';
import { defer, of, ReplaySubject, timer } from 'rxjs';
import { catchError, distinctUntilChanged, exhaustMap, map, share, switchMap, takeWhile } from 'rxjs/operators';
import { EnvironmentRecoveringError, ExecClientError, ProtocolError } from '../errors';
import type { ExecSession } from '../session/exec-session';
import { isTerminal } from '../session/exec-session';
import type { EnvironmentInfo, EnvironmentStatusResponse } from '../wire/environment';
import type { EnvironmentObservedStatus } from './connection-state';
import { toConnectionState } from './connection-state';

/** How long the `environment/status` probe waits (codex: 10 s). */
export const STATUS_TIMEOUT_MS = 10_000;
/** How long `environment/info` waits (codex: 30 s). */
export const INFO_TIMEOUT_MS = 30_000;
/** Default interval of `Environment.status$`'s poll. */
export const DEFAULT_STATUS_POLL_MS = 5_000;
/** Default interval of `Environment.info$`'s poll. */
export const DEFAULT_INFO_POLL_MS = 60_000;

/** What `Environment.info$` emits: the info as a UI shows it, with the error when it cannot be had. */
export type EnvironmentInfoState =
  | {
      /** Not connected yet: nothing known. */
      readonly status: 'pending';
    }
  | {
      /** The executor answered. */
      readonly status: 'known';
      /** What it said about itself. */
      readonly info: EnvironmentInfo;
    }
  | {
      /** Asking failed, or the connection is down. */
      readonly status: 'unavailable';
      /** Why. */
      readonly error: ExecClientError;
      /** The last info known, if any. */
      readonly info: EnvironmentInfo | undefined;
    };

/** Intervals of the environment's polls (`status$`, `info$`). */
export interface EnvironmentPollOptions {
  /** `status$` asks `environment/status` this often while subscribed. @default 5000 */
  readonly statusPollMs?: number;
  /** `info$` asks `environment/info` this often while subscribed. @default 60000 */
  readonly infoPollMs?: number;
  /** Drives both intervals and the probes' timeouts. @default the manager's scheduler */
  readonly scheduler?: SchedulerLike | undefined;
}

export const READY: EnvironmentObservedStatus = Object.freeze({ status: 'ready' });
export const PENDING: EnvironmentObservedStatus = Object.freeze({ status: 'pending' });

const asClientError = (error: unknown): ExecClientError => (error instanceof ExecClientError ? error : new ProtocolError(String(error)));

/** An `environment/status` result as an observed status. */
export const observedStatus = (result: EnvironmentStatusResponse): EnvironmentObservedStatus =>
  result.status === 'ready' ? READY : { status: 'disconnected', error: new ProtocolError(`environment status is ${String(result.status)}`) };

/** A failed probe as an observed status. */
export const failedProbe = (error: unknown): EnvironmentObservedStatus => ({ status: 'disconnected', error: asClientError(error) });

/** The status without a request, when the state alone says it (not connected); `undefined` when connected. */
export function statusFromState(session: ExecSession, environmentId: string): EnvironmentObservedStatus | undefined {
  const state = session.state;
  if (state.type === 'connecting') return PENDING;
  if (state.type === 'recovering') return { status: 'disconnected', error: new EnvironmentRecoveringError(environmentId) };
  if (isTerminal(state)) return { status: 'disconnected', error: state.error };
  return undefined;
}

/** One probe as an Observable (virtual time drives its timeout): emits one observed status, never errors. */
function probeStatus(session: ExecSession, environmentId: string): Observable<EnvironmentObservedStatus> {
  return defer(() => {
    const known = statusFromState(session, environmentId);
    if (known !== undefined) return of(known);
    return session.connection(true).pipe(
      switchMap((rpc) => rpc.request('environment/status', undefined, { timeoutMs: STATUS_TIMEOUT_MS })),
      map(observedStatus),
      catchError((error: unknown) => of(failedProbe(error))),
    );
  });
}

function askInfo(session: ExecSession): Observable<EnvironmentInfo> {
  return session.connection(true).pipe(switchMap((rpc) => rpc.request('environment/info', undefined, { timeoutMs: INFO_TIMEOUT_MS })));
}

const sameError = (a: ExecClientError | undefined, b: ExecClientError | undefined): boolean => a?.code === b?.code && a?.message === b?.message;

/**
 * Polls while subscribed: at once and on each connection change, then every `intervalMs` (a tick while
 * a probe is in flight is skipped; a connection change cancels it). One poll is shared by all
 * subscribers; the latest value is replayed to late ones. Emits only changes; completes after the
 * environment ended (failed or closed), with the value that says so.
 */
function poll<T>(session: ExecSession, intervalMs: number, scheduler: SchedulerLike, probe: () => Observable<T>, same: (a: T, b: T) => boolean): Observable<T> {
  return toConnectionState(session.state$).pipe(
    switchMap(() => timer(0, intervalMs, scheduler).pipe(exhaustMap(probe))),
    distinctUntilChanged(same),
    takeWhile(() => !isTerminal(session.state), true),
    share({ connector: () => new ReplaySubject<T>(1), resetOnError: true, resetOnComplete: false, resetOnRefCountZero: true }),
  );
}

/** `Environment.status$`: see its TSDoc. */
export function pollStatus(session: ExecSession, environmentId: string, options: EnvironmentPollOptions, fallback: SchedulerLike): Observable<EnvironmentObservedStatus> {
  const same = (a: EnvironmentObservedStatus, b: EnvironmentObservedStatus): boolean =>
    a.status === b.status && sameError('error' in a ? a.error : undefined, 'error' in b ? b.error : undefined);
  return poll(session, options.statusPollMs ?? DEFAULT_STATUS_POLL_MS, options.scheduler ?? fallback, () => probeStatus(session, environmentId), same);
}

/** `Environment.info$`: see its TSDoc. `lastKnown` seeds it (the initialize reply's info). */
export function pollInfo(
  session: ExecSession,
  environmentId: string,
  options: EnvironmentPollOptions,
  fallback: SchedulerLike,
  lastKnown: () => EnvironmentInfo | undefined,
): Observable<EnvironmentInfoState> {
  let last: EnvironmentInfo | undefined;
  const probe = (): Observable<EnvironmentInfoState> =>
    defer(() => {
      last ??= lastKnown();
      const state = statusFromState(session, environmentId);
      if (state?.status === 'pending') return of<EnvironmentInfoState>({ status: 'pending' });
      if (state?.status === 'disconnected') return of<EnvironmentInfoState>({ status: 'unavailable', error: state.error, info: last });
      return askInfo(session).pipe(
        map((info): EnvironmentInfoState => {
          last = info;
          return { status: 'known', info };
        }),
        catchError((error: unknown) => of<EnvironmentInfoState>({ status: 'unavailable', error: asClientError(error), info: last })),
      );
    });
  const same = (a: EnvironmentInfoState, b: EnvironmentInfoState): boolean =>
    a.status === b.status &&
    JSON.stringify('info' in a ? a.info : null) === JSON.stringify('info' in b ? b.info : null) &&
    sameError('error' in a ? a.error : undefined, 'error' in b ? b.error : undefined);
  return poll(session, options.infoPollMs ?? DEFAULT_INFO_POLL_MS, options.scheduler ?? fallback, probe, same);
}
