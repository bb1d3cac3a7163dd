import type { Observable, SchedulerLike } from 'rxjs';
import { defer, EMPTY, merge, of, throwError, timer } from 'rxjs';
import { catchError, map, retry, toArray } from 'rxjs/operators';
import { isProcessStarting, TransportClosedError } from '../errors';
import type { ExecClientError } from '../errors';
import type { RpcConnection } from '../rpc/rpc-connection';
import { asClientError } from './attempt-errors';
import type { ProcessSink } from './process-sink';

/** The wait before reading again a process the executor is still spawning (-32600 `process id … is starting`). */
export const STARTING_READ_RETRY_MS = 100;
/** How many times such a read is asked again (3 s in all) before the process fails with the executor's error. */
export const STARTING_READ_RETRIES = 30;

/**
 * The recovery step of a resumed socket: one `process/read {afterSeq: lastPublishedSeq, waitMs: 0}` per
 * live process, merged (docs/protocol.md, "Resume"). A process the executor is still spawning (its start
 * was under way when the socket went) is read again every {@link STARTING_READ_RETRY_MS}, up to
 * {@link STARTING_READ_RETRIES} times, on `scheduler`. A process whose read fails (other than by the
 * socket closing) or cannot be merged is handed to `failed` alone; the others carry on. Emits once when
 * every read is done; errors with the TransportClosedError when the socket dies meanwhile.
 */
export function recoverProcesses(
  rpc: RpcConnection,
  processes: Iterable<ProcessSink>,
  failed: (process: ProcessSink, error: ExecClientError) => void,
  scheduler?: SchedulerLike,
): Observable<unknown> {
  const reads = [...processes].map((process) =>
    defer(() => {
      process.beginRecovery();
      return rpc.request('process/read', { processId: process.processId, afterSeq: process.lastPublishedSeq, maxBytes: null, waitMs: 0 }).pipe(
        retry({ count: STARTING_READ_RETRIES, delay: (error: unknown) => (isProcessStarting(error) ? timer(STARTING_READ_RETRY_MS, scheduler) : throwError(() => error)) }),
      );
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
