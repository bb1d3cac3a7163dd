/** Errors of one JSON-RPC call: the executor's refusal, a timeout, an abort. */
import { ExecClientError } from './exec-client-error';

/** The executor answered a request with a JSON-RPC error. */
export class RpcError extends ExecClientError {
  readonly code: 'RPC_ERROR' | 'NOT_FOUND' | 'SPAWN_FAILED' = 'RPC_ERROR';
  constructor(
    /** The method the executor rejected. */ readonly method: string,
    /** The JSON-RPC error code (-32600 invalid request, -32602 invalid params, -32603 internal, ...). */ readonly rpcCode: number,
    /** The executor's error message. */ readonly rpcMessage: string,
    /** The error's `data`, as sent (e.g. `{kind}` of a spawn failure). */ readonly data?: unknown,
  ) {
    super(`exec-server rejected ${method} (${rpcCode}): ${rpcMessage}`);
  }
}

/** A filesystem path or file handle does not exist (-32004). */
export class NotFoundError extends RpcError {
  override readonly code = 'NOT_FOUND';
}

/** `process/start` could not spawn the program (-32603 with `data.kind`, e.g. `spawnNotFound`). */
export class SpawnError extends RpcError {
  override readonly code = 'SPAWN_FAILED';
  constructor(
    method: string,
    rpcCode: number,
    rpcMessage: string,
    /** Why the spawn failed (`data.kind`): `spawnNotFound`, `spawnPermissionDenied`, `spawnFailed`, ... */ readonly kind: string,
    data?: unknown,
  ) {
    super(method, rpcCode, rpcMessage, data);
  }
}

/** No reply arrived in time. */
export class RequestTimeoutError extends ExecClientError {
  readonly code = 'REQUEST_TIMEOUT';
  constructor(
    /** The method that timed out. */ readonly method: string,
    /** The timeout that passed, in ms. */ readonly afterMs: number,
  ) {
    super(`timed out waiting for exec-server \`${method}\` response after ${afterMs}ms`);
  }
}

/**
 * Whether `error` is the executor's answer for a process it is still spawning (-32600 `process id … is
 * starting`: its start came on a socket that was lost, or is under way): a read of it succeeds shortly.
 */
export const isProcessStarting = (error: unknown): boolean => error instanceof RpcError && error.rpcCode === -32600 && / is starting$/.test(error.rpcMessage);
