import type { Observable } from 'rxjs';
import { defer, EMPTY, merge, of, throwError } from 'rxjs';
import { catchError, map, toArray } from 'rxjs/operators';
import { TransportClosedError } from '../errors';
import type { ExecClientError } from '../errors';
import type { RpcConnection } from '../rpc/rpc-connection';
import { asClientError } from './attempt-errors';
import type { ProcessSink } from './process-sink';

/**
 * The recovery step of a resumed socket: one `process/read {afterSeq: lastPublishedSeq, waitMs: 0}` per
 * live process, merged (docs/protocol.md, "Resume"). A process whose read fails (other than by the
 * socket closing) or cannot be merged is handed to `failed` alone; the others carry on. Emits once when
 * every read is done; errors with the TransportClosedError when the socket dies meanwhile.
 */
export function recoverProcesses(rpc: RpcConnection, processes: Iterable<ProcessSink>, failed: (process: ProcessSink, error: ExecClientError) => void): Observable<unknown> {
  const reads = [...processes].map((process) =>
    defer(() => {
      process.beginRecovery();
      return rpc.request('process/read', { processId: process.processId, afterSeq: process.lastPublishedSeq, maxBytes: null, waitMs: 0 });
    }).pipe(
      map((read) => process.recover(read)),
      catchError((error: unknown) => {
        if (error instanceof TransportClosedError) return throwError(() => error);
        failed(process, asClientError(error));
        return EMPTY;
      }),
    ),
  );
  return reads.length === 0 ? of([]) : merge(...reads).pipe(toArray());
}
