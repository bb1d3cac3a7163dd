import type { Observable } from 'rxjs';
import { distinctUntilChanged, map } from 'rxjs/operators';
import type { ExecClientError } from '../errors';
import type { ClientState } from '../session/exec-session';

/**
 * What a UI shows about an environment's connection:
 * - `connecting`: the first socket's handshake has not finished;
 * - `connected`: calls run;
 * - `disconnected`: the connection was lost and is being recovered (a replacement socket or a re-dial
 *   may still come); `error` is the newest reason, and the state is emitted again when it changes;
 * - `failed`: terminal, the session is gone (`error` says why: recovery deadline, unknown session ...);
 * - `closed`: terminal, the manager was closed by its owner.
 */
export type ConnectionState =
  | {
      /** The first socket's handshake has not finished: calls wait. */
      readonly state: 'connecting';
    }
  | {
      /** Connected: calls run. */
      readonly state: 'connected';
    }
  | {
      /** Lost, being recovered: calls wait. */
      readonly state: 'disconnected';
      /** The newest reason the connection is down. */
      readonly error: ExecClientError;
    }
  | {
      /** Terminal: the session is gone; every call rejects with `error`. */
      readonly state: 'failed';
      /** Why (e.g. ResumeFailedError). */
      readonly error: ExecClientError;
    }
  | {
      /** Terminal: the manager was closed by its owner. */
      readonly state: 'closed';
    };

const CONNECTING: ConnectionState = Object.freeze({ state: 'connecting' });
const CONNECTED: ConnectionState = Object.freeze({ state: 'connected' });
const CLOSED: ConnectionState = Object.freeze({ state: 'closed' });

function toConnection(s: ClientState): ConnectionState {
  switch (s.type) {
    case 'connecting':
      return CONNECTING;
    case 'connected':
      return CONNECTED;
    case 'recovering':
      return { state: 'disconnected', error: s.error };
    case 'failed':
      return { state: 'failed', error: s.error };
    case 'closed':
      return CLOSED;
  }
}

/** Two states a UI would draw the same: same name, and errors of the same code and message. */
function sameState(a: ConnectionState, b: ConnectionState): boolean {
  if (a.state !== b.state) return false;
  const errorA = 'error' in a ? a.error : undefined;
  const errorB = 'error' in b ? b.error : undefined;
  return errorA?.code === errorB?.code && errorA?.message === errorB?.message;
}

/** Maps the client's states to connection states, emitting each change (a new error while recovering is one). */
export const toConnectionState = (states$: Observable<ClientState>): Observable<ConnectionState> =>
  states$.pipe(map(toConnection), distinctUntilChanged(sameState));

/**
 * What `getEnvironmentStatus` resolves (codex `EnvironmentObservedStatus`): `ready` when the connection
 * answered an `environment/status` probe, `pending` before any connection finished, `disconnected` with
 * the error while recovering, when the probe failed, or once failed or closed.
 */
export type EnvironmentObservedStatus =
  | {
      /** The executor answered the probe. */
      readonly status: 'ready';
    }
  | {
      /** No connection has finished its handshake yet. */
      readonly status: 'pending';
    }
  | {
      /** Recovering, the probe failed, or the environment failed or was closed. */
      readonly status: 'disconnected';
      /** Why: EnvironmentRecoveringError while recovering, else the probe's or the environment's error. */
      readonly error: ExecClientError;
    };
