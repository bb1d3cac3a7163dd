/** What a host is started with, and what it gives back. */
import type { Observable, SchedulerLike } from 'rxjs';
import type { EnvironmentManagerOptions } from '../environment/environment-manager-options';
import type { OperatorApiOptions } from './api/operator-api';
import type { HostLogOption } from './host-logger';
import type { HostMonitor } from './host-monitor';
import type { LogStore } from '../store/log-store';
import type { BoundPort, StateStore } from '../store/state-store';
import type { TicketStore } from '../store/ticket-store';
import type { HostedEnvironment } from './hosted-environment';
import type { AccessKeyStore } from './sigv4';
import type { ClusterOptions } from './cluster/cluster-options';

/** The transport name of the direct registration (docs/protocol.md#registration). */
export const DIRECT_TRANSPORT = 'direct_jsonrpc_v1';

/** Where and within what bounds a host keeps its processes' output on disk (see `HostServerOptions.outputLog`). */
export interface HostOutputLogOptions {
  /** The data dir (made if missing); each process's log goes under `processes/<environmentId>/<processId>/`. */
  readonly dataDir: string;
  /** Per-process quota: past it a running process keeps its first segment and its newest ones. @default 1073741824 (1 GiB) */
  readonly quotaBytes?: number;
  /** All logs together: past it, whole logs of released, then closed processes go, oldest first. @default the smaller of 10 GiB and half the free space at start */
  readonly totalBytes?: number;
  /** How long the log of a process that stopped running is kept. @default 604800000 (7 days) */
  readonly retentionMs?: number;
  /** A segment file rolls at this size. @default 8388608 (8 MiB) */
  readonly segmentBytes?: number;
  /** Unwritten output past which the host pauses the process's executor (the disk is behind). @default 2097152 (2 MiB) */
  readonly highWaterBytes?: number;
  /** Unwritten output at which the paused executor is resumed. @default 524288 (512 KiB) */
  readonly lowWaterBytes?: number;
  /** fdatasync at most once per this interval while output flows, and at a process's exit and close. @default 1000 */
  readonly syncIntervalMs?: number;
}

/** Options of {@link startHostServer}. Every limit has a default; credentials do not. */
export interface HostServerOptions {
  /** Accepted access key ids and secrets (from a file or the environment, see `./host-credentials`). */
  readonly credentials: AccessKeyStore;
  /** Bind address. Plain HTTP is refused unless it is loopback. @default '127.0.0.1' */
  readonly host?: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /**
   * Serve Prometheus metrics (`GET /metrics`, no token) on this port of the same address (0: a free
   * one; HTTPS when `tls` is given), apart from the executors' and the operator API's port: see
   * `HostServer.metricsUrl`. @default none (no metrics endpoint; the host still counts)
   */
  readonly metricsPort?: number;
  /**
   * Serve previews of what environments serve on this port of the same address (0: a free one; HTTPS when
   * `tls` is given): `/{environmentId}/{port}/…`, and `{port}-{environmentId}.DOMAIN` with
   * `operator.http.previewDomain`. An origin apart from the operator API's and the dashboard's. Needs the
   * operator API with `http.enabled` to serve anything. @default none (no preview listener)
   */
  readonly previewPort?: number;
  /** Serve HTTPS/WSS with this PEM certificate chain and key. @default none: plain HTTP (loopback only) */
  readonly tls?: {
    /** The PEM certificate chain. */
    readonly cert: string | Buffer;
    /** The PEM private key. */
    readonly key: string | Buffer;
  };
  /** The base url executors reach the host at, when it differs from what they dialled (a proxy). */
  readonly publicUrl?: string;
  /** SigV4 signing region executors use. @default 'us-east-1' */
  readonly region?: string;
  /** SigV4 signing service. @default 'execute-api' */
  readonly service?: string;
  /** How far a signature's `x-amz-date` may be from the host's clock. @default 300000 (5 min) */
  readonly maxClockSkewMs?: number;
  /** Largest WebSocket message accepted from an executor. @default 67108864 (64 MiB) */
  readonly maxFrameBytes?: number;
  /** Environments served at once; beyond, new ones get 503. @default 64 */
  readonly maxEnvironments?: number;
  /** Registrations plus upgrades per second, over all clients; beyond, 429. @default 10 */
  readonly maxHandshakesPerSecond?: number;
  /** Burst allowance of that rate. @default 20 */
  readonly handshakeBurst?: number;
  /** Options of each environment's manager. @default clientName 'exec-rx-host' */
  readonly manager?: Partial<EnvironmentManagerOptions>;
  /**
   * Where the host writes what happens: a {@link HostLogger} (each line with a level, a message and fields:
   * `environmentId` and `generation` where one applies), or a function given each line's message (debug
   * lines left out). Never given a token, signature, secret or process environment value. @default none
   */
  readonly log?: HostLogOption;
  /**
   * Where the audit trail goes: one line per act through the operator API (a start, a stdin write at debug
   * level, stdin end, interrupt, terminate, resize, release; a file write, remove, copy, move and mkdir),
   * each with `audit: true`, `act`, the token's name (`tokenName`, never the token), `environmentId`,
   * `processId`, a start's `argv` (never its env), a file act's `path`, `destination` and `size` (never
   * its content), `remoteAddress`, the answer's `status` and, when refused, the problem's `code`. @default `log`
   */
  readonly audit?: HostLogOption;
  /**
   * The operator API (`/api/v1`, see `OperatorApiOptions`): on when given (its tokens are required),
   * off otherwise (then only the executors' routes are served).
   */
  readonly operator?: OperatorApiOptions;
  /**
   * Keep every process's output in a log on disk under `outputLog.dataDir` (the disk log store:
   * append-only segments with a CRC per record, read by seq at each reader's pace), within a per-process
   * quota, a total bound and a retention time. `exec-rx host` turns it on by default (`--data-dir`). The
   * host opens the store before it listens and closes it (every log flushed) when it closes. Ignored when
   * `logStore` is given. Absent (and no `logStore`): each process's history stays in memory, bounded (the
   * memory log store, within `manager.processHistory` and `manager.totalHistoryBytes`).
   */
  readonly outputLog?: HostOutputLogOptions;
  /**
   * The host's output logs as an opened log store (the `LogStore` port: `DiskLogStore`, `MemoryLogStore`,
   * or an adapter of your own that passes the port's contract suite). The host owns it from then on: it
   * flushes and closes it when it stops. @default the disk log store of `outputLog`, else memory
   */
  readonly logStore?: LogStore;
  /**
   * The host's durable state (the `StateStore` port): `HostState` on a data dir, opened (and so locked)
   * by the caller, who closes it after the host; `MemoryStateStore`; or an adapter of your own. The host
   * reads its registrations and sessions when it starts, records each registration, claims each
   * environment it serves (its epoch, which every write for it carries), records each executor's session
   * when it connects, and keeps keyed starts and stdin records there before what they name is sent. With a
   * durable one the host survives a restart: executors re-dialling the url they registered with get in
   * at once, their sessions and processes are taken back. Whatever the store, a signed upgrade naming a
   * registration this host did not issue gets 409 (the executor registers again; 503 while the host
   * stops), and a known environment's registration is never refused for the rate or the environment
   * limit. @default a `MemoryStateStore` (nothing survives a restart)
   */
  readonly state?: StateStore;
  /**
   * Where this host process keeps the TCP port it bound (see `BoundPort`: its own, never a shared
   * store's): with it the host binds the port it bound before when `port` is 0 or absent (failing with a
   * ConfigError when that port is taken) and records the port it bound. @default `state` when it keeps a
   * port too (`HostState` does), else none
   */
  readonly boundPort?: BoundPort;
  /**
   * Run as one replica of several sharing one state store and one log store (Redis: `store/redis`),
   * behind a load balancer (docs/replicas.md). Its `state` is the host's state (`state` is ignored) and
   * `logStore` should be the shared log. Sessions are read from the store at each new generation and taken
   * back from the owner and epoch it records; the owner renews a lease; a replica whose epoch moved on
   * lets the environment go; registrations are answered while stopping and counted cluster-wide; the
   * operator API answers for processes owned by another replica 503 with `Retry-After`; the instance header
   * is `cluster.id`. @default none: a single host
   */
  readonly cluster?: ClusterOptions;
  /**
   * Where the operator API keeps its download tickets (`POST …/log/tickets`; the `TicketStore` port, which
   * holds each ticket's SHA-256, never the ticket). Replicas give the store they share (Redis:
   * `store/redis`), so a ticket made on one replica opens the log on any of them, once; each replica checks
   * that it still accepts the token that asked. The caller owns it and closes it after the host. Ignored
   * without `operator`. @default the host's own memory (a restarted host knows none of its tickets)
   */
  readonly tickets?: TicketStore;
  /**
   * The host's clock and timers: the handshake and operator rate limits, registration ages, the SigV4
   * clock-skew check, the event streams' pings and stall timers, and (unless `manager.scheduler` says
   * otherwise) every environment's timers. Specs pass a virtual-time scheduler. @default asyncScheduler
   */
  readonly scheduler?: SchedulerLike;
}

/** The urls of a host's other listeners, when it has them: metrics, previews. */
export interface HostSideUrls {
  readonly metricsUrl?: string | undefined;
  readonly previewUrl?: string | undefined;
}

/** A running host. */
export interface HostServer {
  /** The base url (`http://127.0.0.1:PORT`), the executor's `--remote` and the operator API's origin. */
  readonly url: string;
  /** This host's instance id (a UUID made at start, in every operator API answer): a restart has another. */
  readonly instanceId: string;
  /** Where Prometheus scrapes this host (`http://127.0.0.1:PORT/metrics`), when started with `metricsPort`. */
  readonly metricsUrl: string | undefined;
  /**
   * The preview listener's base url (`http://127.0.0.1:PORT`), when started with `previewPort`: previews
   * are `{previewUrl}/{environmentId}/{port}/…` (see `OperatorApiOptions.http`).
   */
  readonly previewUrl: string | undefined;
  /**
   * Every environment's current generation (id, generation, state, info, environment), as a new array
   * on each change. Replays the current list to each subscriber; completes when the host closes; never errors.
   */
  readonly environments$: Observable<readonly HostedEnvironment[]>;
  /**
   * What an operator watches: the figures of the moment (`monitor.facts()`) and each environment's
   * diagnostics and state changes as they happen (`monitor.events$`). The host's own log reads it too.
   */
  readonly monitor: HostMonitor;
  /** The current generation of one environment. */
  environment(id: string): HostedEnvironment | undefined;
  /** The command an executor runs to join, with `<placeholders>` where the credentials go. */
  joinCommand(environmentId?: string): string;
  /** Terminates an environment's current socket (the executor re-dials and is adopted as a replacement). */
  dropSocket(environmentId: string): boolean;
  /**
   * Stops gracefully, in order: stops listening and refuses what still comes (503, so executors and
   * clients retry); writes and syncs every output log; ends every event stream with the come-back
   * event; closes the logs (the last flush: a process's stream that fails when its socket closes is not
   * recorded as failed, so the next run takes it back); closes every environment and the executors'
   * sockets (their processes stay with their executors, which keep their sessions and re-dial); last, the
   * metrics endpoint stops listening. Idempotent: every
   * call returns the same stop (the first call's options count).
   */
  close(options?: HostCloseOptions): Promise<void>;
  /**
   * With replicas (`cluster`): drains for a deploy. `/readyz` answers 503 `draining` at once and upgrades
   * get 503 (registrations are still answered); after `cluster.drainDelayMs` the host stops as `close()`
   * does (its logs closed first, then every executor's socket: its processes stay, and it re-dials another
   * replica, which takes them back). Resolves once stopped; `close()` then returns the same stop. Without
   * `cluster`: resolves at once and does nothing.
   */
  drain(): Promise<void>;
  /** `await using`: the same as {@link close} with its defaults. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** The steps of {@link HostServer.close}, in order. */
export type HostStopStep = 'refusing' | 'flushing output logs' | 'ending event streams' | 'closing output logs' | 'closing executor sockets';

/** Options of {@link HostServer.close}. */
export interface HostCloseOptions {
  /**
   * Hears each step as it begins (a caller with a deadline can say which one did not finish). A promise
   * it returns holds the stop at that step until it settles (to look at the host mid-stop: its probes
   * on the metrics port answer `/readyz` 503 `stopping` until the very end).
   */
  readonly onStep?: (step: HostStopStep) => void | PromiseLike<void>;
  /** The wait the come-back event asks of event-stream clients before they reconnect. @default 1000 */
  readonly retryMs?: number;
}

/** The default {@link HostCloseOptions.retryMs}. */
export const DEFAULT_COME_BACK_RETRY_MS = 1_000;

/** Defaults of {@link HostServerOptions}. */
export const HOST_DEFAULTS = {
  host: '127.0.0.1',
  region: 'us-east-1',
  service: 'execute-api',
  maxClockSkewMs: 300_000,
  maxFrameBytes: 64 * 1024 * 1024,
  maxEnvironments: 64,
  rate: 10,
  burst: 20,
} as const;


/**
 * What a host's environments keep by default: processes started through the operator API replay
 * 16 384 events / 4 MiB each to late subscribers (256 events of line output is under a second), within
 * 256 MiB for all of them together.
 */
export const HOSTED_MANAGER_DEFAULTS = {
  clientName: 'exec-rx-host',
  processHistory: { historyEvents: 16_384, historyBytes: 4 * 1024 * 1024 },
  totalHistoryBytes: 256 * 1024 * 1024,
} as const;
