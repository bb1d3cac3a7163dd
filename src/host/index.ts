/**
 * `exec-rx/host`: the host side of codex's direct remote transport, for code that embeds the server
 * `exec-rx host` runs. Executors register with a SigV4 signature and dial back over WebSocket; each one
 * becomes an {@link exec-rx!Environment | Environment} of the main entry.
 *
 * Kept out of the main entry on purpose: it carries server code and `aws4`, which a client never needs.
 * Only what is exported here is public; the rest of `src/host/` may change.
 *
 * @packageDocumentation
 * @module exec-rx/host
 */

/* The server */
export { startHostServer } from './host-server';
export type { HostCloseOptions, HostOutputLogOptions, HostServer, HostServerOptions, HostStopStep } from './host-options';
export { DIRECT_TRANSPORT } from './host-options';

// Replicas on one shared store (`HostServerOptions.cluster`; the Redis adapters are `exec-rx host --redis-url-file`'s).
export type { ClusterFigures, ClusterOptions, ForwardingOptions, RewriteStep } from './cluster/cluster-options';
export { MIN_REPLICA_KEY_LENGTH, ReplicaKeys, SIGNATURE_SKEW_MS } from './api/replica-keys';
export type { SignatureRefusal, SignedForward } from './api/replica-keys';
export { CLUSTER_DEFAULTS } from './cluster/cluster-options';
export type { ClusterState, EnvironmentStates, OwnedEnvironment, OwnerState, PublishedState, PublishOutcome, ReplicaDirectory, SharedStateStore } from '../store/cluster-state';

/* Where it logs (`log`, `audit`): a logger of its own, or a line function */
export type { HostLogger, HostLogOption, LogFields, LogFieldValue } from './host-logger';

/* What it serves: one entry per environment id, current generation */
export type { HostedEnvironment, HostedState, HostEvent } from './hosted-environment';

/* What an operator watches: the facts of the moment and the events as they happen */
export { HostMonitor } from './host-monitor';
export type { HostFacts } from './host-monitor';

/* Its durable state (`state`): the port every store adapter implements, and what it keeps */
export type {
  BoundPort,
  ClaimOptions,
  EnvironmentOwner,
  EnvironmentSession,
  NewStartRecord,
  PersistedEnvironment,
  PersistedRegistration,
  StartRecord,
  StartRecordState,
  StateStore,
} from '../store/state-store';
export { RECORDED_STARTS, STALE_UPGRADE_WINDOW_MS } from '../store/state-store';
/* Its download tickets (`tickets`): the port a shared store implements (replicas: Redis), and what it keeps */
export type { TicketCaller, TicketRecord, TicketStore } from '../store/ticket-store';
export type { StdinRecord, StdinWriteRecord } from '../store/stdin-record';
export { PERSISTED_WRITES } from '../store/stdin-record';
export type { StoreScriptFailure } from '../errors';
export { StaleClaimError, StaleEpochError, StoreScriptError, StoreUnavailableError } from '../errors';

/* Its output logs (`logStore`, `outputLog`): the port every store adapter implements, and what its readers get */
export type {
  HistoriesOptions,
  LiveLogReader,
  LogPressure,
  LogStore,
  LogStoreCapabilities,
  LogStoreFailure,
  LogStoreFigures,
  PacedLogReader,
  ProcessLogReader,
} from '../store/log-store';
export type { LogEvent, LogFailedEvent, LogRead, LogTruncatedEvent, Timed, TimedEvent, TruncationReason } from '../store/log-events';
export type { ProcessKey, ProcessLaunch, ProcessLogState, ProcessMeta } from '../store/process-meta';
export { OutputLogError, OutputLogReadError } from '../errors';
export type { LogWriteOperation } from '../errors';

/* The adapters: a data dir (`HostState`, the disk state store, locked from `open` to `close`; the disk log store is `outputLog`'s) and memory */
export { DiskStateStore, DiskStateStore as HostState } from '../store/disk/disk-state-store';
export type { HostStateOptions } from '../store/disk/disk-state-store';
export { MemoryStateStore } from '../store/memory/memory-state-store';
export type { MemoryStateStoreOptions } from '../store/memory/memory-state-store';
export { MemoryLogStore } from '../store/memory/memory-log-store';
export type { MemoryLogStoreOptions } from '../store/memory/memory-log-store';
export { DataDirInUseError } from '../errors';

/* The access keys it accepts */
export { loadHostCredentials } from './host-credentials';
export type { LoadedCredentials } from './host-credentials';
export type { AccessKeyStore } from './sigv4';

/* The operator API it serves when `operator` is given */
export type { OperatorApiOptions } from './api/operator-api';
export type { FilesOptions } from './api/files/files-options';
export type { HttpOptions } from './api/preview/http-settings';
export { OperatorTokens, loadOperatorTokens, OPERATOR_TOKEN_ENV, ENV_TOKEN_NAME, MADE_TOKEN_NAME } from './api/operator-tokens';
export type { GeneratedOperatorToken, LoadedOperatorTokens, OperatorCaller, OperatorRole, OperatorTokenSpec } from './api/operator-tokens';
export type { SseLimits } from './api/sse-limits';
