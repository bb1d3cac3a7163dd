/**
 * The typed errors every layer raises: each an {@link ExecClientError} with a stable `code` from the
 * closed set in `codes.ts`. This room's one face: every layer imports its errors from here.
 */
export type { ExecClientErrorCode, OperatorApiErrorCode } from './codes';
export { ExecClientError } from './exec-client-error';
export type { CloseInitiator } from './connection-errors';
export { AuthenticationError, ConnectError, DecodeError, DialHeadersError, FrameTooLargeError, ProtocolError, TransportClosedError } from './connection-errors';
export { isProcessStarting, NotFoundError, RequestTimeoutError, RpcError, SpawnError } from './call-errors';
export type { ResumeFailure } from './environment-errors';
export { ClosedError, EnvironmentFailedError, EnvironmentRecoveringError, ReplacementRejectedError, ResumeFailedError } from './environment-errors';
export type { ResizeFailure, StdinRefusal } from './process-errors';
export {
  CannotStartError,
  ConsumerOverflowError,
  HandleLostError,
  InvalidTtySizeError,
  ProcessFailedError,
  ProcessGapError,
  ReorderOverflowError,
  ResizeFailedError,
  StdinClosedError,
} from './process-errors';
export type { HelperKind } from './setup-errors';
export { ConfigError, ExecutorExitedError, ExecutorStartError, HelperFailedError } from './setup-errors';
export type { LogWriteOperation } from './log-errors';
export { OutputLogError, OutputLogReadError } from './log-errors';
export type { StoreScriptFailure } from './state-errors';
export { DataDirInUseError, StaleClaimError, StaleEpochError, StoreScriptError, StoreUnavailableError } from './state-errors';
export type { HttpTargetRefusal } from './http-errors';
export { HttpBodyOverflowError, HttpRequestTooLargeError, HttpTargetRefusedError } from './http-errors';
export { messageOf } from './message-of';
