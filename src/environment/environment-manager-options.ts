/**
 * What an `EnvironmentManager` is built with: the options every way of building one takes, those of
 * `connect` and `close`, and the options of the session (`ExecClient`) made from them.
 */
import type { SchedulerLike } from 'rxjs';
import type { HistoryFactory } from '../exec/output-history';
import type { ProcessStreamOptions } from '../exec/process-stream-options';
import type { AbortOptions } from '../rpc/abort';
import type { CallObserver, KeepaliveOptions, RpcConnectionOptions } from '../rpc/rpc-connection';
import type { ExecFetchOptions } from '../http/exec-fetch';
import { HttpTargetPolicy, LOOPBACK_TARGETS } from '../http/target-policy';
import type { ExecClientOptions, SessionAdmission } from '../session/exec-client-options';
import type { DialOptions } from '../transport/dial';
import type { NetworkPolicyDecider } from './network-policy';
import { networkPolicyHandler } from './network-policy';

/** Options shared by every way of building a manager (codex `ExecServerClientConnectOptions`, camelCase). */
export interface EnvironmentManagerOptions {
  /** Sent in `initialize`. */
  readonly clientName: string;
  /** The initialize request, its reply and `initialized`. @default 10000 */
  readonly initializeTimeoutMs?: number;
  /** Resume this session on the first socket (dialled mode only; refused for an accepted socket). */
  readonly resumeSessionId?: string;
  /** How long a lost connection may take to be replaced and resumed before the environment fails. @default 25000 */
  readonly recoveryDeadlineMs?: number;
  /** Drives every timer (timeouts, keepalive, deadlines); tests pass a TestScheduler. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** WebSocket pings and the pong deadline; `false` disables them. @default { intervalMs: 30000, timeoutMs: 10000 } */
  readonly keepalive?: KeepaliveOptions | false;
  /** Default timeout of each call. @default 30000 */
  readonly requestTimeoutMs?: number;
  /** Decides `network/policyRequest`s from the executor. @default deny every request */
  readonly networkPolicy?: NetworkPolicyDecider;
  /**
   * Makes each process's output history (see `OutputHistory`): where the events it publishes are kept for
   * its readers. When given, `processHistory`'s `historyEvents` and `historyBytes` and
   * `totalHistoryBytes` are not used: they bound the default.
   * @default in memory, within `processHistory` and `totalHistoryBytes` (see {@link memoryHistories})
   */
  readonly outputHistory?: HistoryFactory;
  /** Per-process limits: of the default in-memory history, and the hole-fill delay. @default { historyEvents: 256, historyBytes: 1048576 } */
  readonly processHistory?: Pick<ProcessStreamOptions, 'historyEvents' | 'historyBytes' | 'holeFillDelayMs'>;
  /** All processes' in-memory history together (the default history's shared budget). @default 67108864 (64 MiB) */
  readonly totalHistoryBytes?: number;
  /** How long an ended process stays in `Environment.processes$` (and keeps its history) unless released. @default 80000 */
  readonly keepClosedMs?: number;
  /** At most this many ended processes stay in `Environment.processes$`; the oldest ended leaves first. @default 256 */
  readonly keepClosed?: number;
  /** How often `Environment.status$` polls while subscribed. @default 5000 */
  readonly statusPollMs?: number;
  /** How often `Environment.info$` polls while subscribed. @default 60000 */
  readonly infoPollMs?: number;
  /** Hears every JSON-RPC call's outcome and latency, on every socket of the session (a host's metrics). @default none */
  readonly onCall?: CallObserver;
  /**
   * The caller's say on the first socket's session: called once the executor has answered `initialize` on
   * it, before any process is read and before the manager resolves (see `SessionAdmission`). A host claims
   * the environment there: a socket its executor gave up on (a stale upgrade) never answers, so it never
   * gets so far. A rejection rejects the building of the manager with its error, and closes the socket.
   * @default none
   */
  readonly admit?: SessionAdmission;
  /**
   * What `Environment.fetch` may reach and how much it holds. A bad `allow` entry rejects the building of the
   * manager with ConfigError. @default { allow: LOOPBACK_TARGETS, maxRequestBodyBytes: 10485760, bufferBytes: 8388608 }
   */
  readonly http?: EnvironmentHttpOptions;
}

/** `EnvironmentManagerOptions.http`: the bounds of `Environment.fetch`. */
export interface EnvironmentHttpOptions {
  /**
   * The targets `Environment.fetch` (and each redirect it follows) may reach: IPv4/IPv6 addresses, CIDR
   * ranges, exact host names (resolved by the executor's resolver); see `HttpTargetPolicy.of`. Link-local,
   * cloud metadata and unspecified addresses are reached only when named exactly. @default LOOPBACK_TARGETS (`127.0.0.1`, `::1`)
   */
  readonly allow?: readonly string[];
  /** A request body's bound in bytes (at most 11 MiB). @default 10485760 */
  readonly maxRequestBodyBytes?: number;
  /** How many bytes of a response body may wait unread before its stream errors with HttpBodyOverflowError. @default 8388608 */
  readonly bufferBytes?: number;
}

/** The bounds `Environment.fetch` runs with under `options.http`; throws ConfigError for a bad allow entry. */
export function fetchOptions(options: EnvironmentManagerOptions): ExecFetchOptions {
  const http = options.http ?? {};
  return {
    policy: HttpTargetPolicy.of(http.allow ?? LOOPBACK_TARGETS),
    ...(http.maxRequestBodyBytes === undefined ? {} : { maxRequestBodyBytes: http.maxRequestBodyBytes }),
    ...(http.bufferBytes === undefined ? {} : { bufferBytes: http.bufferBytes }),
  };
}

/**
 * Options of {@link EnvironmentManager.connect}: the manager's, the dial's (`headers` may be a function,
 * evaluated on every dial and re-dial), and `signal`, which cancels the connect alone (see
 * {@link EnvironmentManager.connect}); it has no effect once `connect` has resolved.
 */
export type ConnectOptions = EnvironmentManagerOptions & DialOptions & AbortOptions;

/** Options of {@link EnvironmentManager.close}. */
export interface CloseOptions {
  /** Terminate every live process first (else the executor keeps them for its 80 s retention). @default false */
  readonly terminateProcesses?: boolean;
}

/** The options of the session (`ExecClient`) a manager built with `options` runs; `reconnectable`: whether a lost socket can be replaced. */
export function clientOptions(options: EnvironmentManagerOptions, reconnectable: boolean): ExecClientOptions {
  const rpc: RpcConnectionOptions = {
    keepalive: options.keepalive ?? {},
    serverRequests: networkPolicyHandler(options.networkPolicy),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
    ...(options.onCall === undefined ? {} : { onCall: options.onCall }),
  };
  return {
    clientName: options.clientName,
    initializeTimeoutMs: options.initializeTimeoutMs,
    resumeSessionId: options.resumeSessionId,
    recoveryDeadlineMs: options.recoveryDeadlineMs,
    scheduler: options.scheduler,
    rpc,
    reconnectable,
    admit: options.admit,
  };
}

