/**
 * `exec-rx`: an RxJS client for the codex exec-server JSON-RPC protocol. Build an
 * {@link EnvironmentManager} from an accepted WebSocket, a dialled url or a stdio child; start processes,
 * use the filesystem and make HTTP requests on its {@link Environment}s.
 *
 * The host server that accepts executors is a separate entry, `exec-rx/host`, so this one stays free of
 * server code. Only what is exported here is public; the rest may change.
 *
 * @packageDocumentation
 * @module exec-rx
 */

/* Client */
export { EnvironmentManager, memoryHistories } from './environment/environment-manager';
export type { AcceptedSocket, AdoptedEnvironment } from './environment/environment-manager';
export type { CloseOptions, ConnectOptions, EnvironmentHttpOptions, EnvironmentManagerOptions } from './environment/environment-manager-options';
export type { AdoptedProcessRecord, AdoptionRecords, LostProcess, SessionAdoption } from './environment/session-adoption';
export type { AdmittedSession, SessionAdmission } from './session/exec-client-options';
export { Environment } from './environment/environment';
export type { ConnectionState, EnvironmentObservedStatus } from './environment/connection-state';
export type { EnvironmentInfoState } from './environment/environment-polls';
export type { EnvironmentFacts } from './environment/environment-facts';
export type { NetworkPolicyDecider, NetworkPolicyRequest } from './environment/network-policy';
export type { NetworkPolicyDecision } from './wire/network';
export type { Capabilities, EnvironmentInfo, ShellInfo } from './wire/environment';

/* Processes */
export { ExecBackend } from './exec/exec-backend';
export { toFileUri } from './wire/file-uri';
export type { StartOptions, StartParams, StartedProcess } from './exec/exec-backend';
export type { TtySize } from './exec/tty-size';
export type { FifoFeeder } from './exec/fifo-feeder';
export { ExecProcess } from './exec/exec-process';
export type { ProcessReadableOptions } from './exec/output-readable';
export type { ProcessStreamOptions } from './exec/process-stream-options';
export type { HistoryFactory, HistoryInput, HistoryLaunch, OutputHistory, OutputHistoryReader } from './exec/output-history';
export type { ProcessState } from './exec/process-status';
export type { ProcessSummary, ProcessTableFacts } from './exec/process-table';
export type { OutputViewOptions, ProcessViewOptions, StreamSelection } from './exec/output-views';
export type { CollectedOutput, ProcessExit, RetainedHistory } from './exec/process-summaries';
export type { FailedEvent, ProcessEvent, TruncatedEvent } from './exec/process-event';
export type { ClosedEvent, ExitedEvent, OutputEvent, OutputStream, SequencedEvent } from './wire/process-event';
export type { EnvPolicy, ExecMetadata, ExecParams, ManagedNetwork, ProcessOutputChunk, ReadResponse, ShellSnapshot, WriteStatus } from './wire/process';
export type { SandboxContext } from './wire/sandbox';

/* Filesystem and HTTP on the executor */
export { RemoteFileSystem } from './fs/remote-file-system';
export type {
  CanonicalizeOptions,
  CopyOptions,
  CreateDirectoryOptions,
  GetMetadataOptions,
  OpenOptions,
  ReadDirectoryOptions,
  ReadFileOptions,
  ReadStreamOptions,
  ReadScheduler,
  RemoteFileSystemOptions,
  RemoveOptions,
  WalkOptions,
  WriteFileOptions,
  WriteStreamOptions,
} from './fs/fs-options';
export type { WriteSource } from './fs/write-stream';
export type { FsDirectoryEntry, FsGetMetadataResponse, FsOpenMode, FsWalkEntry, FsWalkOptions, FsWalkResponse } from './wire/fs';
export { RemoteFileHandle } from './fs/remote-file-handle';
export type { ReadBlockResult } from './fs/remote-file-handle';
export { ExecHttpClient } from './http/http-client';
export type { ExecHttpClientOptions } from './http/http-client';
export type { BodyOrderLimits } from './http/body-order';
export { HttpBodyError } from './http/http-types';
export { execFetch, DEFAULT_FETCH_BUFFER_BYTES, DEFAULT_MAX_REQUEST_BODY_BYTES, MAX_REQUEST_BODY_BYTES } from './http/exec-fetch';
export type { ExecFetchBody, ExecFetchHeaders, ExecFetchInit, ExecFetchOptions, ExecFetchRedirect } from './http/exec-fetch';
export { HttpTargetPolicy, LOOPBACK_TARGETS } from './http/target-policy';
export { HOP_BY_HOP, withoutHopByHop } from './http/http-headers';
export type { HttpEvent, HttpRequest, HttpResponse } from './http/http-types';
export type { HttpHeader, HttpRedirectPolicy } from './wire/http';
export type { BytesInput } from './wire/bytes';

/* Transport (for embedding: wrap your own sockets) */
export { wsSocketPort } from './transport/ws-socket-port';
export type { WsSocketPortOptions } from './transport/ws-socket-port';
export { stdioSocketPort } from './transport/stdio-socket-port';
export { dial } from './transport/dial';
export type { DialHeaders, DialHeadersSource, DialOptions } from './transport/dial';
export type { SocketHandlers, SocketPort } from './transport/socket-port';
export { RpcConnection } from './rpc/rpc-connection';
export type { ConnectionFlow, FlowFacts, FlowHold } from './rpc/connection-flow';
export type { CallObserver, CallOptions, KeepaliveOptions, RpcConnectionOptions } from './rpc/rpc-connection';
export type { AbortOptions } from './rpc/abort';
export type { ServerRequestHandler, ServerRequestOutcome } from './rpc/server-requests';
export type { Diagnostic } from './rpc/diagnostics';
export type { ProcessWireEvent } from './rpc/notification-router';
export type { ConnectionNotificationMethod, MethodName, NotificationMethod, NotificationParamsOf, ParamsOf, ProcessNotificationMethod, ResultOf } from './wire/methods';
export type { Inbound, JsonRpcErrorObject, RequestId } from './wire/jsonrpc';

/* Errors */
export {
  AuthenticationError,
  CannotStartError,
  ClosedError,
  ConfigError,
  ConnectError,
  ConsumerOverflowError,
  DecodeError,
  DialHeadersError,
  EnvironmentFailedError,
  EnvironmentRecoveringError,
  ExecClientError,
  ExecutorExitedError,
  ExecutorStartError,
  FrameTooLargeError,
  HandleLostError,
  HelperFailedError,
  HttpBodyOverflowError,
  HttpRequestTooLargeError,
  HttpTargetRefusedError,
  InvalidTtySizeError,
  NotFoundError,
  ProcessFailedError,
  ProcessGapError,
  ProtocolError,
  ReorderOverflowError,
  ReplacementRejectedError,
  ResizeFailedError,
  RequestTimeoutError,
  ResumeFailedError,
  RpcError,
  SpawnError,
  StdinClosedError,
  TransportClosedError,
} from './errors';
export { ReplayTruncatedError } from './exec/replay-truncated-error';
export type { CloseInitiator, ExecClientErrorCode, HelperKind, HttpTargetRefusal, OperatorApiErrorCode, ResizeFailure, ResumeFailure, StdinRefusal } from './errors';
