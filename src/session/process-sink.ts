import type { Subscription } from 'rxjs';
import type { ExecClientError } from '../errors';
import type { RpcConnection } from '../rpc/rpc-connection';
import type { ReadResponse } from '../wire/process';

/**
 * What the connection layer needs of a live process to carry it across a socket replacement
 * (implemented by `ProcessInbox`, the wire side of each ExecProcess, in src/exec/process-inbox.ts).
 */
export interface ProcessSink {
  readonly processId: string;
  /** The last seq published to the process's consumers (0 when none). Recovery reads start after it. */
  readonly lastPublishedSeq: number;
  /** Routes this process's notifications from `rpc` (called before the connection's handshake). */
  bind(rpc: RpcConnection): Subscription;
  /**
   * A recovery read is about to go out: until {@link recover} takes its answer, notifications the reorder
   * buffer cannot hold are dropped rather than failing the process, since the read brings them (the
   * executor sends its answer after every notification that came before it).
   */
  beginRecovery(): void;
  /** Merges a recovery read (docs/protocol.md#merging-a-recovery-read). Throws a typed error when it cannot; the caller then fails the process. */
  recover(read: ReadResponse): void;
  /** Drops the process silently (adoption: the executor no longer has it); nothing reaches its history. */
  abandon(): void;
  /** Fails the process (terminal). */
  fail(error: ExecClientError): void;
}
