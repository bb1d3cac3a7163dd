/**
 * The operator API (`/api/v1`): its options, and its rows of the host's route table (see `HostRoutes`,
 * which authenticates with operator tokens, applies the API's own rate limits, apart from the executors'
 * handshake budget, and answers every error as problem+json). `/api/v1/openapi.json` and the dashboard
 * (`/`, `/ui/{asset}`) are public rows; every other row needs a token.
 */
import type { ClusterView } from './api-context';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { API_PREFIX } from '../../wire/operator-api';
import type { StartFaultPoint } from '../fault-points';
import type { LogStore } from '../../store/log-store';
import type { StateStore } from '../../store/state-store';
import type { TicketStore } from '../../store/ticket-store';
import type { HostedEnvironments } from '../hosted-environments';
import type { StreamObserver } from '../metrics/host-metrics';
import type { ApiContext } from './api-context';
import { HostedProcesses } from './hosted-processes';
import type { OperatorTokens } from './operator-tokens';
import { parseCorsOrigins } from './cors';
import { LogTickets } from './log-tickets';
import { DEFAULT_STALL_MS } from './process-event-stream';
import type { Route } from './router';
import { methodsOf } from './router';
import { ReplicaKeys } from './replica-keys';
import { randomBytes } from 'node:crypto';
import { environmentRoutes } from './routes-environments';
import { processRoutes } from './routes-processes';
import { operatorPublicRoutes } from './routes-public';
import { API_DOCS_ASSET_NAME, apiDocsDir, UiBundle } from './ui-bundle';
import type { SseLimits } from './sse-limits';
import { ProcessWaits } from './process-waits';
import { DEFAULT_SSE_LIMITS } from './sse-limits';
import { SseHub } from './sse';
import type { FilesOptions } from './files/files-options';
import { HostFiles } from './files/routes-files';
import type { HostLogger } from '../host-logger';
import type { HttpOptions } from './preview/http-settings';
import type { PreviewObserver } from './preview/preview-traffic';
import { HostPreviews } from './preview/host-previews';

/** Options of the operator API (all but the tokens have defaults). */
export interface OperatorApiOptions {
  /** The accepted operator tokens, with their names, roles and environments; a reload (`replaceWith`) that revokes one ends its event streams. */
  readonly tokens: OperatorTokens;
  /**
   * Origins a browser page may call the API from (exact `scheme://host[:port]`, never `*`; see `./cors`):
   * their preflights are answered, their answers carry `Access-Control-Allow-Origin`. @default none: same-origin only
   */
  readonly corsOrigins?: readonly string[];
  /** Event stream limits. @default 1 MiB buffer, 256 streams per token, 1024 in all, ping every 15 s */
  readonly sse?: Partial<SseLimits>;
  /** The largest request body read. @default 4194304 (4 MiB: a 3 MiB stdin write in base64) */
  readonly maxBodyBytes?: number;
  /** Requests per second per token; beyond, 429. @default 100 */
  readonly requestsPerSecond?: number;
  /** Burst of that rate. @default 200 */
  readonly requestBurst?: number;
  /** Unauthenticated requests per second (all together, a burst of twice that and at least 1); beyond, 429 instead of 401. @default 20 */
  readonly unauthenticatedPerSecond?: number;
  /** How long a paused event stream waits for its client to take what was sent. @default 30000 */
  readonly stallMs?: number;
  /**
   * The folder of the dashboard's built files (`index.html` and `app-[hash].*`), served at `/` and `/ui/`;
   * its `api-docs/` folder holds the API reference's, served at `/api/v1/docs` and under it.
   * @default `dist/ui` of the exec-rx package (found by walking up from the host's code to its package root)
   */
  readonly uiDir?: string;
  /**
   * The file routes (`…/environments/{id}/files…`): the upload limit, the roots they are confined to, the
   * file requests in flight per environment and the open handles per environment (see `FilesOptions`).
   * @default 16 GiB uploads, no roots, 4 requests, 32 handles
   */
  readonly files?: FilesOptions;
  /**
   * HTTP through the environments: previews of what they serve and the fetch route (see `HttpOptions`).
   * @default off (`enabled: false`): their routes answer 403 `HTTP_DISABLED`
   */
  readonly http?: HttpOptions;
}

/**
 * Throws a RangeError naming the first option out of range, so a host refuses to start rather than answer
 * every request with a 500 later: rates must be finite and > 0, a burst ≥ 1, counts and sizes whole
 * numbers ≥ 1, `stallMs` and `pingMs` finite and > 0. The OperatorApi's constructor is its one caller.
 */
function checkOperatorOptions(options: OperatorApiOptions): void {
  const positive = (name: string, value: number | undefined): void => {
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) throw new RangeError(`operator option ${name} must be a finite number > 0 (got ${value})`);
  };
  const whole = (name: string, value: number | undefined): void => {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1)) throw new RangeError(`operator option ${name} must be a whole number >= 1 (got ${value})`);
  };
  positive('requestsPerSecond', options.requestsPerSecond);
  if (options.requestBurst !== undefined && !(Number.isFinite(options.requestBurst) && options.requestBurst >= 1)) {
    throw new RangeError(`operator option requestBurst must be a finite number >= 1 (got ${options.requestBurst})`);
  }
  positive('unauthenticatedPerSecond', options.unauthenticatedPerSecond);
  positive('stallMs', options.stallMs);
  whole('maxBodyBytes', options.maxBodyBytes);
  whole('sse.bufferBytes', options.sse?.bufferBytes);
  whole('sse.perToken', options.sse?.perToken);
  whole('sse.total', options.sse?.total);
  positive('sse.pingMs', options.sse?.pingMs);
}

/** A path template the API serves and the methods it has there. */
export interface ServedRoute {
  readonly path: string;
  readonly methods: readonly string[];
}

/**
 * The operator API's rows of the host's route table (see `HostRoutes`). `close()` ends every event stream.
 * Its pings and stall timers run on `scheduler` (the host's, `HostServerOptions.scheduler`).
 */
export class OperatorApi {
  /** Its rows: the dashboard (`/`, `/ui/{asset}`) and the OpenAPI document (public), then the API's routes (token). */
  readonly rows: readonly Route[];
  private readonly hub: SseHub;
  private readonly stopRevoking: () => void;
  private readonly waits: ProcessWaits;
  private readonly tickets: LogTickets;
  private readonly files: HostFiles;
  /** Previews and the fetch route: the host's preview listener hands its requests to {@link HostPreviews.handle}. */
  readonly previews: HostPreviews;

  /**
   * `stores`: the host's log store (what the event streams, `/log` and the lists read), state store
   * (keyed starts and stdin records, kept before what they name is sent) and, when given, where the
   * download tickets are kept (replicas share one; its owner closes it after the host; default: this
   * API's own memory, see `./log-tickets`); `fault`: a test-only point where a keyed start crashes the
   * host (see `../fault-points`); `streams`: hears the event streams (the host's metrics).
   */
  constructor(
    environments: HostedEnvironments,
    options: OperatorApiOptions,
    hostInstance: string,
    stores: { readonly logs: LogStore; readonly state: StateStore; readonly tickets?: TicketStore | undefined },
    scheduler: SchedulerLike = asyncScheduler,
    fault?: StartFaultPoint,
    streams?: StreamObserver,
    /** With replicas: where the owner of an environment another replica holds is found (its calls get 503). */
    cluster?: ClusterView,
    /** Where the file routes log a download cut because its file changed. @default none */
    log?: HostLogger,
    /** What the previews need of the host: the key their links are signed with, its names, the metrics. @default a key made now, no names */
    previewDeps?: { readonly keys?: ReplicaKeys | undefined; readonly hostNames?: readonly string[]; readonly observer?: PreviewObserver | undefined },
  ) {
    checkOperatorOptions(options);
    if (options.corsOrigins !== undefined) parseCorsOrigins(options.corsOrigins);
    const limits = { ...DEFAULT_SSE_LIMITS, ...options.sse };
    this.hub = new SseHub(limits, hostInstance, scheduler, streams);
    const hub = this.hub;
    const tickets = new LogTickets(scheduler, { tokens: options.tokens, ...(stores.tickets === undefined ? {} : { store: stores.tickets }) });
    this.tickets = tickets;
    this.stopRevoking = options.tokens.onRevoke((names) => {
      void tickets.revoke(names);
      hub.revoke(names);
    });
    this.waits = new ProcessWaits(scheduler);
    const processes = new HostedProcesses({ environments, scheduler, state: stores.state, logs: stores.logs, ...(fault === undefined ? {} : { fault }) });
    // The stdin records of the processes it serves are the API's to write back after Redis lost its data.
    cluster?.onRewrite((owned) => processes.rewriteStdins(owned));
    const context: ApiContext = {
      hostInstance,
      environments,
      processes,
      hub: this.hub,
      waits: this.waits,
      maxBodyBytes: options.maxBodyBytes ?? 4 * 1024 * 1024,
      stallMs: options.stallMs ?? DEFAULT_STALL_MS,
      scheduler,
      logs: stores.logs,
      tickets,
      cluster,
    };
    const pages = { dashboard: new UiBundle(options.uiDir), apiDocs: new UiBundle(apiDocsDir(options.uiDir), API_DOCS_ASSET_NAME) };
    this.files = new HostFiles(context, options.files, scheduler, log);
    const keys = previewDeps?.keys ?? madeKeys();
    this.previews = new HostPreviews(context, options.http, { keys, hostNames: previewDeps?.hostNames ?? [], observer: previewDeps?.observer, tokens: options.tokens, scheduler });
    this.rows = [...operatorPublicRoutes(hostInstance, pages), ...environmentRoutes(context), ...processRoutes(context), ...this.files.rows, ...this.previews.rows];
  }

  /**
   * Every path under `/api/v1` this API answers, with its methods: the OpenAPI document and the token
   * routes (the dashboard is not part of the API). A spec holds this and the document together.
   */
  get routes(): readonly ServedRoute[] {
    return this.rows.filter((route) => route.path.startsWith(`${API_PREFIX}/`)).map((route) => ({ path: route.path, methods: methodsOf(route) }));
  }

  /** Open event streams (see `HostMonitor.facts`). */
  get eventStreams(): number {
    return this.hub.size;
  }

  /**
   * Ends every event stream (the host is closing), with the come-back event when `retryMs` is given, and
   * answers every open `…/wait` 503 with `Retry-After`; returns how many event streams it ended.
   */
  close(retryMs?: number): number {
    this.stopRevoking();
    this.tickets.close();
    this.files.close();
    this.previews.close();
    this.waits.close(retryMs);
    return this.hub.close(retryMs);
  }
}

/** A key of a host without replica keys, made at its start: its preview links end with it. */
const madeKeys = (): ReplicaKeys => new ReplicaKeys([randomBytes(32).toString('base64')]);
