import type { Observable } from 'rxjs';
import { defer, EMPTY, merge, of, throwError } from 'rxjs';
import { catchError, distinctUntilChanged, filter, finalize, map, mergeMap, switchMap } from 'rxjs/operators';
import { TransportClosedError } from '../errors';
import type { RpcConnection } from '../rpc/rpc-connection';
import type { ExecSession } from '../session/exec-session';
import { isTerminal } from '../session/exec-session';

/**
 * Each connection the client installs, once; errors with the failure when the client fails (or closes).
 * Waits while connecting or recovering.
 */
export const connectedRpcs = (client: ExecSession): Observable<RpcConnection> =>
  client.state$.pipe(
    mergeMap((state) => (isTerminal(state) ? throwError(() => state.error) : state.type === 'connected' ? of(state.rpc) : EMPTY)),
    distinctUntilChanged(),
  );

/**
 * Watches `missing` (`file://` URIs) under `watchId`: `fs/watchMissing {watchId, missing}` on the current
 * connection, then emits each time `fs/missingChanged {watchId}` arrives. Registrations belong to a
 * connection, so after a reconnect it registers again on the new one and then emits once: a path may
 * have appeared while nobody was watching (notifications are not queued while detached). A registration
 * cut by a drop waits for the next connection. Never completes on its own; errors with the registration's
 * RpcError / RequestTimeoutError, or with the client's failure. Unsubscribing sends the unwatch
 * (`fs/watchMissing {watchId, missing: []}`, fire and forget) on the current connection if it is open.
 */
export function watchMissingOn(client: ExecSession, watchId: number, missing: readonly string[]): Observable<void> {
  return defer(() => {
    let current: RpcConnection | undefined;
    return connectedRpcs(client).pipe(
      switchMap((rpc) => {
        const reconnected = current !== undefined;
        current = rpc;
        return watchOnConnection(rpc, watchId, [...missing], reconnected);
      }),
      finalize(() => {
        // A failed client is closing its socket, and the watch goes with it: nothing to unwatch.
        if (current !== undefined && current.closeError === undefined && !isTerminal(client.state)) {
          current.request('fs/watchMissing', { watchId, missing: [] }).subscribe({ error: () => undefined });
        }
      }),
    );
  });
}

function watchOnConnection(rpc: RpcConnection, watchId: number, missing: string[], reconnected: boolean): Observable<void> {
  // The params arrive decoded (one that fails its codec goes to the connection's diagnostics, not here).
  const changed$ = rpc.notifications('fs/missingChanged').pipe(
    filter((params) => params.watchId === watchId),
    map((): void => undefined),
  );
  const register$ = rpc.request('fs/watchMissing', { watchId, missing }).pipe(
    mergeMap(() => (reconnected ? of(undefined) : EMPTY)),
    // The connection died under the registration: the next connection registers again.
    catchError((error: unknown) => (error instanceof TransportClosedError ? EMPTY : throwError(() => error))),
  );
  // Listen before registering, so a change reported right after the reply is not missed.
  return merge(changed$, register$);
}
