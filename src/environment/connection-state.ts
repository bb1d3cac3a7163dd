import type { Observable } from 'rxjs';
import { distinctUntilChanged, map } from 'rxjs/operators';
import type { ExecClientError } from '../errors';
import type { ClientState } from '../session/exec-session';

/**
 * What a UI shows about an environment's connection: `connected`; `disconnected` while recovering (a
 * replacement socket or re-dial may still come, with the error that caused it); `failed`, terminal.
 */
export type ConnectionState =
  | { readonly state: 'connected' }
  | { readonly state: 'disconnected'; readonly error: ExecClientError | undefined }
  | { readonly state: 'failed'; readonly error: ExecClientError };

/** Maps the client's states to connection states, emitting only changes. */
export const toConnectionState = (states$: Observable<ClientState>): Observable<ConnectionState> =>
  states$.pipe(
    map((s): ConnectionState => {
      switch (s.type) {
        case 'connected':
          return { state: 'connected' };
        case 'connecting':
          return { state: 'disconnected', error: undefined };
        case 'recovering':
          return { state: 'disconnected', error: s.error };
        case 'failed':
          return { state: 'failed', error: s.error };
      }
    }),
    distinctUntilChanged((a, b) => a.state === b.state),
  );

/**
 * What `getEnvironmentStatus` resolves (codex `EnvironmentObservedStatus`): `ready` when the connection
 * answered an `environment/status` probe, `pending` before any connection finished, `disconnected` with
 * the error while recovering, when the probe failed, or once failed.
 */
export type EnvironmentObservedStatus =
  | { readonly status: 'ready' }
  | { readonly status: 'pending' }
  | { readonly status: 'disconnected'; readonly error: ExecClientError };
