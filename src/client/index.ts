/**
 * `exec-rx/client`: a client of an exec-rx host's operator API (`exec-rx host`), for Node 20 and
 * browsers. {@link HostClient} lists environments and processes, starts processes, and streams their
 * events with the library's promise kept over HTTP: every output byte once, in order, across dropped
 * connections and a host unreachable for a while, resumed by seq; typed errors with the library's codes.
 * Those events come as an Observable (`events$`, read at full speed) or pulled with backpressure
 * (`events()`, `eventStream()`: the body is read no faster than the consumer takes them). `run()` starts a
 * command and resolves with its exit code and bounded output; `wait()` resolves once a process exited.
 * The overview comes as `environments$` / `processes$(environmentId)` or, for `for await`, `environments()` /
 * `processes()`. `await using client = new HostClient(…)` closes every stream and call of the client.
 *
 * Nothing here needs a Node built-in: it uses `fetch`, web streams, `TextDecoder`/`TextEncoder`,
 * `atob`/`btoa` and `crypto.randomUUID`, which browsers and Node 20 both have.
 *
 * @packageDocumentation
 * @module exec-rx/client
 */

/* The client */
export { HostClient } from './host-client';
export type { HostClientOptions } from './host-client-options';
export type { AbortOptions, TtySize } from '../wire/shared-types';
export type { ProcessEventsOptions } from './process-event-stream';
export type { PulledEventsOptions } from './pulled-events';
export type { SnapshotIteratorOptions } from './snapshot-iterator';
export { DEFAULT_SNAPSHOT_BUFFER } from './snapshot-iterator';
export { DEFAULT_MAX_OUTPUT_BYTES } from './run-process';
export type {
  ApiErrorInfo,
  EnvironmentOverview,
  EnvironmentResource,
  HostCaller,
  HostClosedEvent,
  HostInfo,
  HostExitedEvent,
  HostOutputEvent,
  HostProcessEvent,
  HostTruncatedEvent,
  LogUrlOptions,
  ProcessResource,
  RunOptions,
  RunResult,
  HostStartOptions,
  StartRequest,
  WaitResult,
  WatchConnectionEvent,
  WatchEvent,
  WatchOverviewEvent,
  WatchProcessFailedEvent,
  WatchSelection,
} from './host-types';
export type { RetryPolicy } from './retry';

/* Files (`client.files(environmentId)`) */
export type { DownloadUrlOptions, FindOptions, HostFiles, TransferOptions } from './host-files';
export type { HostFetchInit, HostHttp } from './host-http';
export type { PreviewLink, PreviewList, PreviewPort, PreviewSharing } from './http-types';
export { MAX_FETCH_BODY_BYTES } from './host-http';
export type { FileReadOptions } from './file-read';
export type { FileData, FileWriteOptions } from './file-write';
export type { FileChange, FileChangeKind, FileEntry, FileListing, FileType, FindResult, FoundPath } from './file-types';
export { DEFAULT_RETRY_POLICY } from './retry';

/* Errors (an aborted call rejects with `signal.reason`, as Node's APIs do: there is no abort error of our own) */
export { ClosedError, ExecClientError } from '../errors';
export { HostApiError } from './host-api-error';
export type { ExecClientErrorCode, OperatorApiErrorCode } from '../errors';
