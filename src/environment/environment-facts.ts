/**
 * The facts an operator watches about one environment, read by whoever needs them (a host's metrics,
 * its log, a dashboard) from one place: a snapshot of the figures, and the connection's diagnostics
 * as they happen.
 */
import type { Observable } from 'rxjs';
import { EMPTY } from 'rxjs';
import { switchMap } from 'rxjs/operators';
import type { ProcessTableFacts } from '../exec/process-table';
import type { Diagnostic } from '../rpc/diagnostics';
import type { ClientState } from '../session/exec-session';

/** What one environment holds right now (see `Environment.facts`). */
export interface EnvironmentFacts extends ProcessTableFacts {
  /** Calls sent on the current connection and not answered yet; 0 while there is none. */
  readonly pendingCalls: number;
  /** Processes the current connection routes notifications to; 0 while there is none. */
  readonly processRoutes: number;
}

/** The figures of {@link EnvironmentFacts}: the current connection's (when connected) and the list's. */
export function environmentFacts(state: ClientState, processes: ProcessTableFacts): EnvironmentFacts {
  const rpc = state.type === 'connected' ? state.rpc : undefined;
  return { ...processes, pendingCalls: rpc?.pendingCount ?? 0, processRoutes: rpc?.processRouteCount ?? 0 };
}

/**
 * The diagnostics of whichever connection is current (see `RpcConnection.diagnostics$`): those of each
 * socket while it is connected, across replacements. Completes once the state stream completes (the
 * environment failed or closed); never errors.
 */
export function diagnosticsOf(state$: Observable<ClientState>): Observable<Diagnostic> {
  return state$.pipe(switchMap((state) => (state.type === 'connected' ? state.rpc.diagnostics$ : EMPTY)));
}
