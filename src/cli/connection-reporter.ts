/**
 * What `exec-rx run` says on stderr about the connection (to the executor, or to the host with
 * `--host`): a lost connection (and its recovery) is reported at once with `--verbose`, otherwise only
 * when it lasts longer than a second (before the first connection, as not reachable yet). A failure is not reported here: the command's own failure says it.
 */
import type { Observable, SchedulerLike, Subscription } from 'rxjs';
import { asyncScheduler, defer, EMPTY, of, timer } from 'rxjs';
import { distinctUntilChanged, map, switchMap } from 'rxjs/operators';
import type { ConnectionState } from '../environment/connection-state';

/** Options of {@link reportConnection}. */
export interface ConnectionReportOptions {
  readonly verbose: boolean;
  /** How long a disconnection lasts before it is reported without `verbose`. @default 1000 */
  readonly thresholdMs?: number;
  /** @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** What the connection goes to, as the lines name it. @default 'the executor' */
  readonly peer?: string;
}

/**
 * Subscribes to `states$` and writes one line per reported change to `write`. The caller unsubscribes
 * when done (that also cancels a pending report). Never errors; ends when `states$` completes.
 */
export function reportConnection(states$: Observable<ConnectionState>, write: (line: string) => void, options: ConnectionReportOptions): Subscription {
  const scheduler = options.scheduler ?? asyncScheduler;
  const thresholdMs = options.thresholdMs ?? 1000;
  const peer = options.peer ?? 'the executor';
  let lostAt: number | undefined;
  let announced = false;
  let everConnected = false;
  const lines$ = states$.pipe(
    // A new error while recovering is the same loss to report: only a change of state name counts here.
    distinctUntilChanged((a, b) => a.state === b.state),
    switchMap((state): Observable<string> => {
      if (state.state === 'connecting') return EMPTY;
      if (state.state === 'disconnected') {
        lostAt = scheduler.now();
        const reason = state.error.message;
        const reached = everConnected;
        const line = (): string => {
          announced = true;
          return reached ? `lost the connection to ${peer} (${reason}); resuming` : `cannot reach ${peer} yet (${reason}); retrying`;
        };
        return options.verbose ? defer(() => of(line())) : timer(thresholdMs, scheduler).pipe(map(line));
      }
      const since = lostAt;
      const wasAnnounced = announced;
      const reached = everConnected;
      lostAt = undefined;
      announced = false;
      if (state.state === 'connected') everConnected = true;
      if (state.state === 'connected' && since !== undefined && wasAnnounced) {
        const seconds = ((scheduler.now() - since) / 1000).toFixed(1);
        return of(reached ? `connection resumed after ${seconds} s` : `connected after ${seconds} s`);
      }
      return EMPTY;
    }),
  );
  return lines$.subscribe((line) => write(line));
}
