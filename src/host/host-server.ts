/**
 * Starting a host: one HTTP(S) server for the executors' routes (registration and the signed WebSocket
 * upgrade, see `./direct-host`) and the host's route table (see `./api/host-routes`): the probes `/healthz`
 * and `/readyz`, and
 * when configured the operator API (`/api/v1`, its dashboard and OpenAPI document, see `./api`).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { asyncScheduler } from 'rxjs';
import { ConfigError } from '../errors';
import { DiskLogStore } from '../store/disk/disk-log-store';
import type { LogStore, LogStoreFigures } from '../store/log-store';
import { MemoryLogStore } from '../store/memory/memory-log-store';
import { MemoryStateStore } from '../store/memory/memory-state-store';
import type { BoundPort, StateStore } from '../store/state-store';
import { Forwarder } from './api/forwarding';
import { HostRoutes } from './api/host-routes';
import { OperatorApi } from './api/operator-api';
import type { NotReadyReason, ReadinessCheck } from './api/routes-public';
import { probeRoutes } from './api/routes-public';
import { startBodyDeadline } from './body-deadline';
import type { HostStores } from './direct-host';
import { DirectHost } from './direct-host';
import { startFaultOf } from './fault-points';
import { hostPort, internalUrlOf, isLoopbackHost } from './host-http';
import type { HostFacts } from './host-monitor';
import { describeDiagnostic, HostMonitor } from './host-monitor';
import type { HostServer, HostServerOptions } from './host-options';
import type { HostLogger } from './host-logger';
import { hostLoggerOf } from './host-logger';
import { HostMetrics } from './metrics/host-metrics';
import type { MetricsEndpoint } from './metrics/metrics-server';
import { listenForMetrics } from './metrics/metrics-server';
import type { PreviewEndpoint } from './api/preview/preview-listener';
import { listenForPreviews } from './api/preview/preview-listener';
import { HOST_DEFAULTS as DEFAULTS, HOSTED_MANAGER_DEFAULTS } from './host-options';

/**
 * Starts the host. Resolves once listening (its log store opened and recovered first, and what its state
 * store holds read); rejects when a store cannot be opened or read, the address is in use, plain HTTP was
 * asked for on a non-loopback address (a ConfigError), or an operator option is out of range (a
 * RangeError naming it, from the `OperatorApi` it builds). The caller owns the host and calls `close()`.
 */
export async function startHostServer(options: HostServerOptions): Promise<HostServer> {
  const host = options.host ?? DEFAULTS.host;
  if (options.tls === undefined && !isLoopbackHost(host)) {
    throw new ConfigError(`refusing plain HTTP on ${host}: executors require https/wss off loopback; pass a TLS certificate and key`);
  }
  // A replica's own id; the cluster's id is what the operator API names as the instance (the same on every replica).
  const instanceId = randomUUID();
  const log = hostLoggerOf(options.log);
  const logs = await logStoreOf(options);
  // A log that cannot write (a full disk, EIO) fails alone: its readers get a typed error, the host goes on.
  logs.failures$.subscribe((error) => log.error({}, `output log: ${error.message}`));
  try {
    const cluster = options.cluster;
    const state = cluster?.state ?? options.state ?? new MemoryStateStore(options.scheduler === undefined ? {} : { scheduler: options.scheduler });
    // A replica reads registrations and sessions from the shared store when an executor comes, never only at its start.
    const stores: HostStores =
      cluster === undefined
        ? { logs, state, registrations: await state.registrations(), sessions: await state.environments(), owner: instanceId }
        : { logs, state, registrations: [], sessions: [], owner: instanceId, cluster };
    return await serve(options, host, instanceId, log, stores);
  } catch (error: unknown) {
    await logs.close();
    throw error;
  }
}

/**
 * The log store the options choose: `logStore` as given; else the disk log store of `outputLog`, opened
 * (and recovered) now; else memory, within the environments' history bounds.
 */
async function logStoreOf(options: HostServerOptions): Promise<LogStore> {
  if (options.logStore !== undefined) return options.logStore;
  const scheduler = options.scheduler === undefined ? {} : { scheduler: options.scheduler };
  if (options.outputLog !== undefined) return DiskLogStore.open({ ...options.outputLog, ...scheduler });
  const manager = { ...HOSTED_MANAGER_DEFAULTS, ...options.manager };
  const own = manager.outputHistory === undefined ? {} : { outputHistory: manager.outputHistory };
  return new MemoryLogStore({ processHistory: manager.processHistory, totalHistoryBytes: manager.totalHistoryBytes, ...own, ...scheduler });
}

/** Where the host keeps the port it bound: `boundPort`, else `state` when it keeps one too (`HostState` does). */
function boundPortOf(options: HostServerOptions): BoundPort | undefined {
  if (options.boundPort !== undefined) return options.boundPort;
  const state = options.state;
  return state !== undefined && keepsPort(state) ? state : undefined;
}

/** Whether a state store keeps the port its host bound too (`HostState` does: it is one host's data dir). */
const keepsPort = (state: StateStore): state is StateStore & BoundPort => 'setPort' in state && 'port' in state;

/** The rest of {@link startHostServer}, once the stores are open: resolves once listening. */
async function serve(options: HostServerOptions, host: string, instanceId: string, log: HostLogger, stores: HostStores): Promise<HostServer> {
  // The metrics' gauges read the monitor, which is built on the environments the metrics count for.
  const watched: { monitor?: HostMonitor } = {};
  const { logs } = stores;
  const figures = logs.figures === undefined ? undefined : (): LogStoreFigures => logs.figures ?? NO_FIGURES;
  const metrics = new HostMetrics(() => watched.monitor?.facts() ?? EMPTY_FACTS, figures);
  logs.syncs$.subscribe(metrics.onSync);
  const direct = new DirectHost(options, stores, metrics);
  // Test only (docs/architecture.md, "Fault points"): read once, here.
  const fault = startFaultOf(process.env['EXEC_RX_FAULT']);
  const cluster = direct.cluster;
  // What the operator API names as the instance: the cluster's id with replicas (moving between them is no restart).
  const apiInstance = cluster?.id ?? instanceId;
  const hostNames = [host, ...(options.publicUrl === undefined ? [] : [new URL(options.publicUrl).hostname])];
  const previewDeps = { hostNames, observer: metrics.previews, ...(cluster?.options.forwarding === undefined ? {} : { keys: cluster.options.forwarding.keys }) };
  const operator =
    options.operator === undefined
      ? undefined
      : new OperatorApi(direct.environments, options.operator, apiInstance, { ...stores, tickets: options.tickets }, options.scheduler, fault, metrics.streams, cluster, log, {
          ...previewDeps,
        });
  if (cluster !== undefined) metrics.observeCluster(() => cluster.figures());
  // What replicas compare after a rolling reload: the digest of the operator tokens each accepts now.
  const tokens = options.operator?.tokens;
  const tokensDigest = tokens === undefined ? undefined : (): string => tokens.setDigest;
  if (tokens !== undefined) metrics.observeOperatorTokens(() => tokens);
  // Ready once listening with its state recorded (the stores were loaded before), until it stops or drains.
  let phase: NotReadyReason | 'ready' = 'starting';
  const readiness: ReadinessCheck = async () => (phase !== 'ready' ? phase : cluster?.draining === true ? 'draining' : logs.unready());
  const audit = options.audit === undefined ? log : hostLoggerOf(options.audit);
  const rows = [...probeRoutes(apiInstance, readiness, tokensDigest), ...(operator?.rows ?? [])];
  // With replicas and a replica key: owner-only calls for another replica's environment go to its owner.
  const forwarding = cluster?.options.forwarding;
  const ca = forwarding?.ca === undefined ? {} : { ca: forwarding.ca };
  const scheduler = options.scheduler ?? asyncScheduler;
  const forwarder = cluster === undefined || forwarding === undefined ? undefined : new Forwarder({ keys: forwarding.keys, self: instanceId, scheduler, ...ca }, cluster);
  if (forwarder !== undefined) {
    metrics.observeForwarding(() => forwarder.figures());
    operator?.previews.forwardWith(forwarder);
  }
  const routes = new HostRoutes(rows, options.operator, apiInstance, log, options.scheduler, audit, cluster === undefined ? undefined : instanceId, forwarder);
  const hostMonitor = new HostMonitor(direct.environments, () => operator?.eventStreams ?? 0, options.scheduler);
  watched.monitor = hostMonitor;
  hostMonitor.events$.subscribe(metrics.onHostEvent);
  // The host's log reads the monitor's events like any other reader (the state changes it logs itself).
  hostMonitor.events$.subscribe((event) => {
    if (event.type !== 'diagnostic') return;
    const { environmentId, generation, diagnostic } = event;
    log.warn({ environmentId, generation, diagnostic: diagnostic.type }, `environment ${environmentId} generation ${generation}: ${describeDiagnostic(diagnostic)}`);
  });
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    startBodyDeadline(req, res, scheduler);
    if (routes.owns(req.url ?? '/')) routes.handle(req, res);
    else direct.onRequest(req, res);
  };
  const server = options.tls === undefined ? createServer(onRequest) : createTlsServer({ cert: options.tls.cert, key: options.tls.key }, onRequest);
  server.headersTimeout = 10_000;
  // The body's deadline is ours (./body-deadline): Node's bounds a whole request, an upload of any size too.
  server.requestTimeout = 0;
  server.on('upgrade', direct.onUpgrade);
  server.on('clientError', (_error, socket: Duplex) => socket.destroy());
  const port = await listen(server, host, options.port, boundPortOf(options)?.port);
  let metricsEndpoint: MetricsEndpoint | undefined;
  let previewEndpoint: PreviewEndpoint | undefined;
  const scheme = options.tls === undefined ? 'http' : 'https';
  try {
    await boundPortOf(options)?.setPort(port);
    metricsEndpoint = options.metricsPort === undefined ? undefined : await listenForMetrics(metrics, host, options.metricsPort, options.tls, readiness, tokensDigest);
    const previewPort = options.previewPort;
    if (previewPort !== undefined && operator !== undefined) previewEndpoint = await listenForPreviews(operator.previews, host, previewPort, options.tls, scheme, scheduler);
  } catch (error: unknown) {
    server.close();
    await metricsEndpoint?.close();
    throw error;
  }
  phase = 'ready';
  cluster?.start(internalUrlOf(scheme, host, port));
  const stops = {
    refuse: () => {
      phase = 'stopping';
      routes.stop();
    },
    endStreams: (retryMs: number) => operator?.close(retryMs) ?? 0,
    closeMetrics: async () => {
      await Promise.all([metricsEndpoint?.close(), previewEndpoint?.close()]);
    },
  };
  return direct.serve(server, `${scheme}://${hostPort(host, port)}`, instanceId, hostMonitor, stops, { metricsUrl: metricsEndpoint?.url, previewUrl: previewEndpoint?.url });
}

/** A store's figures when it has none to give (it keeps no files). */
const NO_FIGURES: LogStoreFigures = { diskBytes: 0, segments: 0, evictions: { total: 0, retention: 0, quota: 0 } };

/** What the metrics read before the monitor exists (never scraped then: the endpoint listens after). */
const EMPTY_FACTS: HostFacts = {
  environments: { starting: 0, connecting: 0, connected: 0, disconnected: 0, failed: 0, closed: 0 },
  processes: { running: 0, exited: 0, closed: 0, failed: 0 },
  pendingCalls: 0,
  processRoutes: 0,
  retainedEvents: 0,
  retainedBytes: 0,
  historySubscribers: 0,
  eventStreams: 0,
  diskPauses: 0,
  unaccountedTakeBacks: 0,
};

/**
 * Listens on `port`, or, when it is 0 or absent and the host remembers the port it bound before, on that
 * one (its executors re-dial the url they registered with); resolves with the port bound.
 */
async function listen(server: Server, host: string, port: number | undefined, bound: number | undefined): Promise<number> {
  const remembered = (port ?? 0) === 0 ? bound : undefined;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: unknown): void => {
      const inUse = typeof error === 'object' && error !== null && 'code' in error && error.code === 'EADDRINUSE';
      if (remembered === undefined || !inUse) return reject(error);
      const why = `port ${remembered}, which this data dir's host bound before (its executors re-dial it), is in use: free it, or choose a port explicitly`;
      reject(new ConfigError(why, { cause: error }));
    };
    server.once('error', failed);
    server.listen(remembered ?? port ?? 0, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const address = server.address();
  // An invariant, not an error of the caller's: a server listening on a port always has a TCP address, so no code fits.
  if (address === null || typeof address === 'string') throw new Error('host server has no TCP address');
  return address.port;
}
