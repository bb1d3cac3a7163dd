import type { Observable, SchedulerLike } from 'rxjs';
import { asyncScheduler, firstValueFrom, from, race, timer } from 'rxjs';
import { mergeMap } from 'rxjs/operators';
import { ExecBackend } from '../exec/exec-backend';
import type { ExecProcess } from '../exec/exec-process';
import type { ProcessStreamOptions } from '../exec/process-stream-options';
import type { ProcessSummary, ProcessTableOptions } from '../exec/process-table';
import { ProcessTable } from '../exec/process-table';
import { RemoteFileSystem } from '../fs/remote-file-system';
import type { ExecFetchInit, ExecFetchOptions } from '../http/exec-fetch';
import { execFetch } from '../http/exec-fetch';
import { ExecHttpClient } from '../http/http-client';
import { HttpTargetPolicy, LOOPBACK_TARGETS } from '../http/target-policy';
import type { ConnectionFlow } from '../rpc/connection-flow';
import type { ExecClient } from '../session/exec-client';
import type { EnvironmentInfo } from '../wire/environment';
import type { ConnectionState, EnvironmentObservedStatus } from './connection-state';
import { toConnectionState } from './connection-state';
import type { EnvironmentInfoState, EnvironmentPollOptions } from './environment-polls';
import { failedProbe, INFO_TIMEOUT_MS, observedStatus, pollInfo, pollStatus, STATUS_TIMEOUT_MS, statusFromState } from './environment-polls';
import { EnvironmentSession } from './environment-session';
import type { EnvironmentFacts } from './environment-facts';
import { diagnosticsOf, environmentFacts } from './environment-facts';
import type { Diagnostic } from '../rpc/diagnostics';

/** How long closing waits for helper processes cleaning up after sized ttys. */
const HELPERS_IDLE_LIMIT_MS = 2_000;

/** What an Environment is built with (by its EnvironmentManager). */
export interface EnvironmentSettings {
  /** For each process started: the factory of its output history, and its limits. */
  readonly streamOptions: () => ProcessStreamOptions;
  /** How long and how many ended processes stay listed. */
  readonly processes: ProcessTableOptions;
  /** Intervals of `status$` and `info$`. */
  readonly polls: EnvironmentPollOptions;
  /** Drives the polls, the process table's timers and the close bound. @default asyncScheduler */
  readonly scheduler: SchedulerLike | undefined;
  /** The bounds of {@link Environment.fetch}. @default the LOOPBACK_TARGETS policy, 10 MiB request bodies, 8 MiB unread */
  readonly http?: ExecFetchOptions;
}

/**
 * One executor's environment. The same object stays valid across socket replacements. Once it failed,
 * every call (its own, its processes', its filesystem's and HTTP client's) rejects with
 * EnvironmentFailedError (`ENVIRONMENT_FAILED`, `cause`: the failure); a call that was waiting for
 * recovery when recovery failed rejects with the failure itself.
 */
export class Environment {
  private infoPromise: Promise<EnvironmentInfo> | undefined;
  private readonly backend: ExecBackend;
  private readonly filesystem: RemoteFileSystem;
  private readonly http: ExecHttpClient;
  private readonly fetchOptions: ExecFetchOptions;
  private readonly table: ProcessTable;
  /** The session the calls go through: a call once failed rejects with EnvironmentFailedError. */
  private readonly session: EnvironmentSession;
  private readonly scheduler: SchedulerLike;

  /**
   * The connection state: replays the current value to each subscriber, then emits each change:
   * `connecting`, `connected`, `disconnected` while recovering (again whenever the error changes),
   * then `failed` or `closed`, after which it completes. Never errors.
   */
  readonly connectionState$: Observable<ConnectionState>;

  /**
   * The environment's processes (id, argv, tty, state, exit code, failure) in start order, as a new
   * frozen snapshot on each change, replaying the current one to each subscriber. An ended process stays
   * listed until released, for `keepClosedMs` (80 s) and among the newest `keepClosed` (256) ended ones,
   * whichever comes first; leaving the list releases its history. Completes once the environment failed
   * or closed (its processes then show `failed`). Never errors; unsubscribing affects nothing else.
   */
  readonly processes$: Observable<readonly ProcessSummary[]>;

  /**
   * The observed status, polled with `environment/status` while anyone subscribes: at once, on each
   * connection change and every `statusPollMs` (5 s), one poll shared by all subscribers, the latest
   * replayed to late ones. Emits only changes; errors come as values (`disconnected` with the error).
   * Completes after the environment failed or closed. The poll stops when the last subscriber leaves.
   */
  readonly status$: Observable<EnvironmentObservedStatus>;

  /**
   * The environment info as a UI shows it (`pending`, `known`, or `unavailable` with the error and the
   * last info known), asked with `environment/info` at once, on each connection change and every
   * `infoPollMs` (60 s) while anyone subscribes; shared, replayed, changes only, completes and stops like
   * {@link status$}. Never errors.
   */
  readonly info$: Observable<EnvironmentInfoState>;

  /**
   * What goes wrong on the connection without belonging to a call (an unparsable frame, a reply to an
   * unknown id, a notification that failed its codec ...), as it happens, from whichever socket is
   * current: nothing already received is lost because of one. Hot: a subscriber hears only what comes
   * after it subscribed. Completes once the environment failed or closed; never errors.
   */
  readonly diagnostics$: Observable<Diagnostic>;

  /** @internal Built by EnvironmentManager, which owns `client`. */
  constructor(
    /** The environment id it was created under. */
    readonly id: string,
    /** @internal */ readonly client: ExecClient,
    settings: EnvironmentSettings,
  ) {
    const scheduler = settings.scheduler ?? asyncScheduler;
    this.scheduler = scheduler;
    this.connectionState$ = toConnectionState(client.state$);
    this.table = new ProcessTable({ scheduler, ...settings.processes });
    // The client's state completes once it failed or closed: the process list ends with it.
    client.state$.subscribe({ complete: () => this.table.end() });
    this.processes$ = this.table.processes$;
    this.status$ = pollStatus(client, id, settings.polls, scheduler);
    this.info$ = pollInfo(client, id, settings.polls, scheduler, () => client.cachedInfo);
    this.diagnostics$ = diagnosticsOf(client.state$);
    this.session = new EnvironmentSession(id, client);
    this.backend = new ExecBackend(this.session, settings.streamOptions, this.table, () => this.info());
    this.filesystem = new RemoteFileSystem(this.session);
    this.http = new ExecHttpClient(this.session);
    this.fetchOptions = settings.http ?? { policy: HttpTargetPolicy.of(LOOPBACK_TARGETS) };
  }

  /** The executor's filesystem (`fs/*`): paths as native absolute paths or `file://` URIs, bytes in and out. */
  getFilesystem(): RemoteFileSystem {
    return this.filesystem;
  }

  /** HTTP requests made by the executor (`http/request`), buffered or streamed. */
  getHttpClient(): ExecHttpClient {
    return this.http;
  }

  /**
   * `fetch` made from inside the environment: the executor connects to the target, on its own network
   * (no sandbox applies). Only targets the manager's `http.allow` list reaches (loopback by default), each
   * redirect followed by us hop by hop and checked the same way. Resolves with a WHATWG `Response` once the
   * final head arrived; its body streams as the executor sends it, bounded by `http.bufferBytes` unread.
   * Rejects with HttpTargetRefusedError or HttpRequestTooLargeError (nothing sent), the RpcError of a failed
   * request, TransportClosedError, EnvironmentFailedError, the signal's reason, or a TypeError as fetch does;
   * the body stream errors with HttpBodyError, TransportClosedError, HttpBodyOverflowError or the signal's
   * reason. Nothing can stop the executor's own request: an abort or a cancelled body stops listening, the
   * executor reads on until the body ends, `timeoutMs` passes or its connection closes. See `execFetch`.
   */
  fetch(input: string | URL | Request, init: ExecFetchInit = {}): Promise<Response> {
    return execFetch(this.http, input, init, this.fetchOptions);
  }

  /** Starts processes on this environment. */
  getExecBackend(): ExecBackend {
    return this.backend;
  }

  /**
   * Flow control of this environment's connection, across socket replacements: consumers that fell
   * behind (`ExecProcess.toReadable`, `holdConnection`) hold it paused; `flow.facts` says whether it is
   * paused, how often and for how long it was, and `flow.paused$` follows it.
   */
  get flow(): ConnectionFlow {
    return this.client.flow;
  }

  /** A process of this environment while it is listed in {@link processes$}; `undefined` otherwise. */
  getProcess(processId: string): ExecProcess | undefined {
    return this.table.get(processId);
  }

  /**
   * What the environment holds right now: calls waiting on the current connection, routed processes,
   * the listed processes by state and what their histories hold. A new snapshot on each call (it walks
   * the process list); read it when asked (a metrics scrape, a dashboard tick), not per event.
   */
  facts(): EnvironmentFacts {
    return environmentFacts(this.client.state, this.table.facts());
  }

  /**
   * The environment info: from the initialize reply when it carried one, else asked once with
   * `environment/info` (lazily, on the first call) and cached. Rejects with the call's typed error.
   */
  info(): Promise<EnvironmentInfo> {
    const cached = this.client.cachedInfo;
    if (cached !== undefined) return Promise.resolve(cached);
    if (this.infoPromise === undefined) {
      const asking = this.forceInfo();
      this.infoPromise = asking;
      asking.catch(() => {
        if (this.infoPromise === asking) this.infoPromise = undefined;
      });
    }
    return this.infoPromise;
  }

  /** Asks `environment/info` again (waits for recovery) and resolves with the answer. */
  async forceInfo(): Promise<EnvironmentInfo> {
    const info = await firstValueFrom(this.session.call('environment/info', undefined, { timeoutMs: INFO_TIMEOUT_MS }));
    this.infoPromise = Promise.resolve(info);
    return info;
  }

  /**
   * @internal Waits, at most 2 s, for the helper processes still removing what sized ttys left in the
   * executor's temp dir (`ExecBackend.idle`); used by `EnvironmentManager.close`.
   */
  async helpersIdle(): Promise<void> {
    // Whichever comes first; the other is unsubscribed (the timer cancelled).
    await firstValueFrom(race(from(this.backend.idle()), timer(HELPERS_IDLE_LIMIT_MS, this.scheduler)));
  }

  /** Terminates every live process (best effort, 5 s each); used by `EnvironmentManager.close`. */
  async terminateAll(): Promise<void> {
    const ids = this.client.liveProcessIds();
    await Promise.allSettled(ids.map((processId) => firstValueFrom(this.client.call('process/terminate', { processId }, { timeoutMs: 5_000 }))));
  }

  /**
   * Probes the connection without waiting for recovery: `ready` when `environment/status` answers ready,
   * `disconnected` with the error at once while recovering, on a failed probe, or once failed or closed;
   * `pending` before the first connection. Never rejects.
   */
  status(): Promise<EnvironmentObservedStatus> {
    const known = statusFromState(this.client, this.id);
    if (known !== undefined) return Promise.resolve(known);
    const live = this.client.liveRpc();
    // One promise on the common path: this is the health probe a UI may poll hard.
    if (live !== undefined) return live.callThen('environment/status', undefined, STATUS_OPTIONS, observedStatus, failedProbe);
    const probe = firstValueFrom(this.client.connection(true).pipe(mergeMap((rpc) => rpc.request('environment/status', undefined, STATUS_OPTIONS))));
    return probe.then(observedStatus, failedProbe);
  }
}

const STATUS_OPTIONS = { timeoutMs: STATUS_TIMEOUT_MS } as const;
