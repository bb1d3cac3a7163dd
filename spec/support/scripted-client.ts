/**
 * An `ExecClient` on scripted sockets (`FakeSocketPort`), as the unit specs of the exec layer drive it:
 * reconnectable, its sockets a Subject the spec pushes replacements into.
 */
import { Subject } from 'rxjs';
import { ProcessTable } from '../../src/exec/process-table';
import type { RpcConnectionOptions } from '../../src/rpc/rpc-options';
import { ExecClient } from '../../src/session/exec-client';
import type { FakeSocketPort } from './fake-socket-port';

/** A client connected on `first` (its connections with `rpc`): resolves once its handshake is done. The spec closes the client. */
export async function connectedClient(first: FakeSocketPort, rpc: RpcConnectionOptions = {}): Promise<{ readonly client: ExecClient; readonly sockets: Subject<FakeSocketPort> }> {
  const sockets = new Subject<FakeSocketPort>();
  const client = new ExecClient(sockets, { clientName: 'spec', reconnectable: true, rpc });
  const starting = client.start();
  sockets.next(first);
  await starting;
  return { client, sockets };
}

/** A process list that ends with `client`, as an Environment's does (no 80 s expiry timer left behind). */
export function listEndingWith(client: ExecClient): ProcessTable {
  const table = new ProcessTable();
  client.state$.subscribe({ complete: () => table.end() });
  return table;
}
