import type { Observable } from 'rxjs';
import { defer, of, ReplaySubject, throwError } from 'rxjs';
import { catchError, map, mergeMap, retry, share } from 'rxjs/operators';
import { ClosedError, HandleLostError, TransportClosedError } from '../errors';
import type { CallOptions, RpcConnection } from '../rpc/rpc-connection';
import type { ExecSession } from '../session/exec-session';
import { isTerminal } from '../session/exec-session';
import type { FsOpenParams, FsReadBlockResponse } from '../wire/fs';

/**
 * One `fs/open` handle and the connection it is open on (handles belong to a connection,
 * docs/protocol.md#file-handles). A `read` handle follows the client across reconnects: before its first
 * call on a new connection it is opened again there with the same `handleId`, and a read cut by a drop is
 * sent again (a read at an explicit offset is safe to repeat). A `replace` handle is never reopened,
 * since that would truncate the file: once its connection is gone every call fails with
 * {@link HandleLostError}.
 *
 * Internal to `src/fs`: {@link RemoteFileHandle} is the public face. Not reentrant; owned by one handle.
 */
export class HandleBinding {
  /** The connection the last `fs/open` was sent on. */
  private rpc: RpcConnection | undefined;
  /** That `fs/open`, shared by every call on that connection; replays its outcome. */
  private opened$: Observable<void> | undefined;
  private released = false;

  constructor(
    private readonly client: ExecSession,
    readonly params: FsOpenParams & { readonly mode: NonNullable<FsOpenParams['mode']> },
  ) {}

  /** Whether `release` was called. */
  get isReleased(): boolean {
    return this.released;
  }

  /** Opens the handle on the current connection (waiting for recovery); emits once. */
  open(options: CallOptions = {}): Observable<void> {
    return this.onConnection(() => of(undefined), options);
  }

  /** `fs/readBlock` at `offset`; emits the decoded block once. */
  read(offset: number, len: number, options: CallOptions = {}): Observable<FsReadBlockResponse> {
    return this.onConnection((rpc) => rpc.request('fs/readBlock', { handleId: this.params.handleId, offset, len }, options), options);
  }

  /** `fs/writeBlock` of `chunk` (≤ 1 MiB) at `offset`; emits once when written. */
  write(offset: number, chunk: Uint8Array, options: CallOptions = {}): Observable<void> {
    return this.onConnection((rpc) => rpc.request('fs/writeBlock', { handleId: this.params.handleId, offset, chunk }, options), options).pipe(map(() => undefined));
  }

  /**
   * Releases the handle; emits once, never errors with a transport error. Sends `fs/close` only when an
   * `fs/open` succeeded on a connection that is still open (the executor drops a connection's handles
   * with it; `fs/close` of an unknown handle would answer `{}` anyway). Waits for an `fs/open` still in
   * flight first, so the close cannot overtake it. Idempotent.
   */
  release(options: CallOptions = {}): Observable<void> {
    return defer(() => {
      const rpc = this.rpc;
      const opened$ = this.opened$;
      if (this.released || rpc === undefined || opened$ === undefined) {
        this.released = true;
        return of(undefined);
      }
      this.released = true;
      return opened$.pipe(
        map(() => true),
        catchError(() => of(false)),
        mergeMap((isOpen) => (isOpen && rpc.closeError === undefined ? rpc.request('fs/close', { handleId: this.params.handleId }, options) : of(undefined))),
        map(() => undefined),
        catchError((error: unknown) => (error instanceof TransportClosedError ? of(undefined) : throwError(() => error))),
      );
    });
  }

  /** Runs `call` on the current connection once the handle is open there; `options.timeoutMs` also governs that `fs/open`. */
  private onConnection<T>(call: (rpc: RpcConnection) => Observable<T>, options: CallOptions): Observable<T> {
    const attempt$ = defer(() => {
      if (this.released) return throwError(() => new ClosedError(`file handle \`${this.params.handleId}\` is closed`));
      // A replace handle whose connection died is lost: fail now rather than after the recovery.
      if (this.isWriteHandleLost()) return throwError(() => new HandleLostError(this.params.handleId));
      return this.client.connection().pipe(mergeMap((rpc) => this.bind(rpc, options).pipe(mergeMap(() => call(rpc)))));
    });
    if (this.params.mode === 'replace') return attempt$;
    return attempt$.pipe(
      retry({ delay: (error: unknown) => (error instanceof TransportClosedError && !isTerminal(this.client.state) ? of(0) : throwError(() => error)) }),
    );
  }

  private isWriteHandleLost(): boolean {
    return this.params.mode === 'replace' && this.rpc !== undefined && this.rpc.closeError !== undefined;
  }

  /** The shared `fs/open` on `rpc`, sent on the first call there. */
  private bind(rpc: RpcConnection, options: CallOptions): Observable<void> {
    if (rpc === this.rpc && this.opened$ !== undefined) return this.opened$;
    if (this.rpc !== undefined && this.params.mode === 'replace') return throwError(() => new HandleLostError(this.params.handleId));
    this.rpc = rpc;
    // Not refcounted and never reset: one fs/open per connection, whoever unsubscribes, and its
    // outcome (an error too) is what every later call on this connection sees. So it takes the caller's
    // timeout but not its abort signal: one aborted call must not break the handle for the others.
    const opened$ = rpc.request('fs/open', this.params, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }).pipe(
      map(() => undefined),
      share({ connector: () => new ReplaySubject<void>(1), resetOnError: false, resetOnComplete: false, resetOnRefCountZero: false }),
    );
    this.opened$ = opened$;
    return opened$;
  }
}
