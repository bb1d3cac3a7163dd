import type { Observable } from 'rxjs';
import { defer, race } from 'rxjs';
import { filter, map, mergeMap, repeat, take } from 'rxjs/operators';
import type { SocketPort } from '../transport/socket-port';
import type { PauseClock } from './pause-clock';

/** codex's hosts ping every 30 s. */
export const DEFAULT_KEEPALIVE_INTERVAL_MS = 30_000;
/** How long a ping may wait for its pong before the peer counts as gone. */
export const DEFAULT_KEEPALIVE_TIMEOUT_MS = 10_000;

/**
 * Keepalive settings: a WebSocket ping every `intervalMs`; no pong within `timeoutMs` is a disconnect.
 * Both count only the time the connection reads its socket: a paused connection neither pings nor
 * times a pong out.
 */
export interface KeepaliveOptions {
  /** @default 30000 */
  readonly intervalMs?: number;
  /** @default 10000 */
  readonly timeoutMs?: number;
}

/**
 * Pings `port` every `intervalMs` (the executor never pings, but answers pings) and emits a failure
 * message once when a ping gets no pong within `timeoutMs`. Both are measured on `clock`, the
 * connection's running time, which stands still while the socket is paused (a pong cannot be read
 * then). Never completes by itself; the subscriber unsubscribes it with the connection.
 */
export function silentPeer(port: SocketPort, pongs$: Observable<void>, settings: KeepaliveOptions, clock: PauseClock): Observable<string> {
  const intervalMs = settings.intervalMs ?? DEFAULT_KEEPALIVE_INTERVAL_MS;
  const timeoutMs = settings.timeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS;
  // Ticks at running times start + k × intervalMs, as `interval` would on the scheduler's time.
  const ticks$ = defer(() => {
    let next = clock.now();
    return defer(() => clock.until((next += intervalMs))).pipe(repeat());
  });
  return ticks$.pipe(
    mergeMap(() => {
      port.ping?.();
      return race(pongs$.pipe(take(1), map(() => false)), clock.until(clock.now() + timeoutMs).pipe(map(() => true)));
    }, 1),
    filter((silent) => silent),
    take(1),
    map(() => `no pong from ${port.label} within ${timeoutMs}ms`),
  );
}
