import type { Observable, SchedulerLike } from 'rxjs';
import { interval, race, timer } from 'rxjs';
import { filter, map, mergeMap, take } from 'rxjs/operators';
import type { SocketPort } from '../transport/socket-port';

/** codex's hosts ping every 30 s. */
export const DEFAULT_KEEPALIVE_INTERVAL_MS = 30_000;
/** How long a ping may wait for its pong before the peer counts as gone. */
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 10_000;

/** Keepalive settings: a WebSocket ping every `intervalMs`; no pong within `timeoutMs` is a disconnect. */
export interface KeepaliveOptions {
  /** @default 30000 */
  readonly intervalMs?: number;
  /** @default 10000 */
  readonly timeoutMs?: number;
}

/**
 * Pings `port` every `intervalMs` (the executor never pings, but answers pings) and emits a failure
 * message once when a ping gets no pong within `timeoutMs`. Never completes by itself; the subscriber
 * unsubscribes it with the connection.
 */
export function silentPeer(port: SocketPort, pongs$: Observable<void>, settings: KeepaliveOptions, scheduler: SchedulerLike): Observable<string> {
  const intervalMs = settings.intervalMs ?? DEFAULT_KEEPALIVE_INTERVAL_MS;
  const timeoutMs = settings.timeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS;
  return interval(intervalMs, scheduler).pipe(
    mergeMap(() => {
      port.ping?.();
      return race(pongs$.pipe(take(1), map(() => false)), timer(timeoutMs, scheduler).pipe(map(() => true)));
    }, 1),
    filter((silent) => silent),
    take(1),
    map(() => `no pong from ${port.label} within ${timeoutMs}ms`),
  );
}
