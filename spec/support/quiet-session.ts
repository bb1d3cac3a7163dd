import { NEVER } from 'rxjs';
import { ConnectionFlow } from '../../src/rpc/connection-flow';
import type { ExecSession } from '../../src/session/exec-session';

/** A session never asked anything (no holes, no terminate): for ExecProcesses driven through their inbox. */
export const quietSession: ExecSession = {
  state: { type: 'connecting' },
  state$: NEVER,
  call: () => NEVER,
  connection: () => NEVER,
  liveRpc: () => undefined,
  addProcess: () => undefined,
  removeProcess: () => undefined,
  flow: new ConnectionFlow(),
};
