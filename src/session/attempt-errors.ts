import { ExecClientError, messageOf, ProtocolError, RequestTimeoutError, RpcError, TransportClosedError } from '../errors';
import type { ResumeFailure } from '../errors';
import { ErrorCodes } from '../wire/jsonrpc';

/** Retryable attempt failures (codex): transport closed, initialize timeout, -32010 session still attached. */
export const isRetryable = (error: unknown): boolean =>
  error instanceof TransportClosedError ||
  (error instanceof RequestTimeoutError && error.method === 'initialize') ||
  (error instanceof RpcError && error.rpcCode === ErrorCodes.SessionAlreadyAttached);

/** Why a refused resume failed: the executor forgot the session, or refused it otherwise. */
export const refusalReason = (error: ExecClientError): ResumeFailure =>
  error instanceof RpcError && error.rpcMessage.startsWith('unknown session id') ? 'unknownSession' : 'rejected';

/** Any thrown value as a typed error. */
export const asClientError = (error: unknown): ExecClientError =>
  error instanceof ExecClientError ? error : new ProtocolError(`unexpected failure: ${messageOf(error)}`, { cause: error });

/** `25s` for whole seconds, else `1500ms` (codex's deadline message). */
export const formatSeconds = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);
