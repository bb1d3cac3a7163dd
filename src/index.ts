/**
 * exec-rx: an RxJS client for the codex exec-server JSON-RPC protocol.
 * Only what is exported here is public; the rest may change.
 */

/* Client */
export { EnvironmentManager } from './environment/environment-manager';
export type { AcceptedSocket, CloseOptions, ConnectOptions, EnvironmentManagerOptions } from './environment/environment-manager';
export { Environment } from './environment/environment';
export type { ConnectionState, EnvironmentObservedStatus } from './environment/connection-state';
export type { EnvironmentInfoState } from './environment/environment-polls';
export type { NetworkPolicyDecider, NetworkPolicyRequest } from './environment/network-policy';

/* Processes */
export { ExecBackend } from './exec/exec-backend';
export { toFileUri } from './wire/file-uri';
export type { StartOptions, StartParams, StartedProcess } from './exec/exec-backend';
export type { TtySize } from './exec/tty-size';
export { ExecProcess } from './exec/exec-process';
export type { ProcessStreamOptions, ProcessViewOptions } from './exec/exec-process';
export type { ProcessState } from './exec/process-status';
export type { ProcessSummary } from './exec/process-table';
export type { OutputViewOptions, StreamSelection } from './exec/output-views';
export type { HistoryBudget } from './exec/history-budget';
export type { FailedEvent, ProcessEvent, TruncatedEvent } from './exec/process-event';
export type { ClosedEvent, ExitedEvent, OutputEvent, OutputStream, SequencedEvent } from './wire/process-event';

/* Wire types that the signatures above use */
export type { Capabilities, EnvironmentInfo, ShellInfo } from './wire/environment';
export type { EnvPolicy, ExecMetadata, ExecParams, ExecResponse, ManagedNetwork, ProcessOutputChunk, ReadResponse, ShellSnapshot, WriteResponse, WriteStatus } from './wire/process';
export type { MethodName, ParamsOf, ResultOf } from './wire/methods';

/* Filesystem and HTTP on the executor */
export { RemoteFileSystem } from './fs/remote-file-system';
export type { RemoteFileSystemOptions } from './fs/fs-options';
export { RemoteFileHandle } from './fs/remote-file-handle';
export type { ReadBlockResult } from './fs/remote-file-handle';
export { ExecHttpClient } from './http/http-client';
export type { ExecHttpClientOptions } from './http/http-client';
export { HttpBodyError } from './http/http-types';
export type { HttpEvent, HttpRequest, HttpResponse } from './http/http-types';

/* Transport (for embedding: wrap your own sockets) */
export { wsSocketPort } from './transport/ws-socket-port';
export type { WsSocketPortOptions } from './transport/ws-socket-port';
export { stdioSocketPort } from './transport/stdio-socket-port';
export { dial } from './transport/dial';
export type { DialOptions } from './transport/dial';
export type { SocketHandlers, SocketPort } from './transport/socket-port';
export { RpcConnection } from './rpc/rpc-connection';
export type { CallOptions, KeepaliveOptions, RpcConnectionOptions } from './rpc/rpc-connection';
export type { ServerRequestHandler, ServerRequestOutcome } from './rpc/server-requests';
export type { Diagnostic } from './rpc/diagnostics';

/* Errors */
export {
  AbortedError,
  AuthenticationError,
  ClosedError,
  ConnectError,
  ConsumerOverflowError,
  DecodeError,
  EnvironmentFailedError,
  EnvironmentRecoveringError,
  ExecClientError,
  FrameTooLargeError,
  HandleLostError,
  InvalidTtySizeError,
  NotFoundError,
  ProcessFailedError,
  ProcessGapError,
  ProtocolError,
  ReorderOverflowError,
  ReplacementRejectedError,
  RequestTimeoutError,
  ResizeFailedError,
  ResumeFailedError,
  RpcError,
  SpawnError,
  TransportClosedError,
} from './errors';
export { ReplayTruncatedError } from './exec/replay-truncated-error';
export type { CloseInitiator, ExecClientErrorCode, ResizeFailure, ResumeFailure } from './errors';
