/**
 * `HostClient`: an exec-rx host's operator API as RxJS streams and promises, for Node 20 and browsers
 * (fetch and web streams only). It keeps the library's promise over HTTP: a process's events arrive
 * once each, in order, across dropped connections and a host unreachable for a while, resumed by seq.
 */
import type { Observable } from 'rxjs';
import { distinctUntilChanged, map } from 'rxjs/operators';
import { HostApiError } from './host-api-error';
import { API_PREFIX } from '../wire/operator-api';
import { encodeBase64 } from './base64';
import { exitOf, hostInfoOf, logUrlOf, startedOf, wasRunning } from './host-answers';
import type { HostClientOptions } from './host-client-options';
import { hostConnection } from './host-client-options';
import type { ApiAnswer, ApiRequest, HostConnection, RetryMode } from './host-connection';
import { longPoll, send } from './host-connection';
import type { AbortOptions, TtySize } from '../wire/shared-types';
import type {
  EnvironmentOverview,
  HostInfo,
  HostProcessEvent,
  HostStartOptions,
  LogUrlOptions,
  ProcessResource,
  RunOptions,
  RunResult,
  StartRequest,
  WaitResult,
  WatchEvent,
  WatchSelection,
} from './host-types';
import type { ProcessEventsOptions } from './process-event-stream';
import { processEvents } from './process-event-stream';
import type { PulledEventsOptions } from './pulled-events';
import { iterate, pulledEvents } from './pulled-events';
import { runToEnd } from './run-process';
import { ClientLifetime } from './client-lifetime';
import type { SnapshotIteratorOptions } from './snapshot-iterator';
import { snapshotIterator } from './snapshot-iterator';
import { overview, watch } from './watch-stream';
import { HostFiles } from './host-files';
import { HostHttp } from './host-http';

const segment = encodeURIComponent;
const newId = (): string => globalThis.crypto.randomUUID();

/**
 * A client of one host's operator API: one url, or the urls of the replicas of one cluster (see
 * `HostClientOptions.url`), moved between when one stops answering. Holds no connection between calls;
 * every stream is cold.
 */
export class HostClient implements AsyncDisposable {
  private readonly connection: HostConnection;
  private readonly lifetime = new ClientLifetime();

  constructor(options: HostClientOptions) {
    this.connection = hostConnection(options);
  }

  /**
   * The overview: every environment with its processes, a new array on each change. Reconnects by
   * itself; never completes; errors with HostApiError (`UNAUTHORIZED`, `HOST_UNREACHABLE` …).
   * Unsubscribing closes the stream.
   */
  get environments$(): Observable<readonly EnvironmentOverview[]> {
    return this.lifetime.observe(overview(this.connection));
  }

  /**
   * Who this client's token is (`GET /api/v1/host`): the host instance and the caller's name, role and
   * environments, so a page can show what the token may do. Rejects with HostApiError (`UNAUTHORIZED`
   * for a token the host does not accept, `HOST_UNREACHABLE` …) or `signal.reason` when aborted.
   */
  async host(options: AbortOptions = {}): Promise<HostInfo> {
    return hostInfoOf(await this.request(options.signal, { method: 'GET', path: `${API_PREFIX}/host`, retry: 'idempotent' }));
  }

  /**
   * The overview and, with `selection`, that process's events, on ONE connection (a browser tab's one
   * long-lived stream): `overview` snapshots as {@link environments$} gives them, the process's events as
   * {@link events$} gives them (each once, in order, resumed after the last seq emitted across dropped
   * connections), `processFailed` when the process failed or is not there (the overview goes on; a
   * process whose environment is still starting is asked for again each second, with a `reconnecting`
   * saying so, and is a `processFailed` ENVIRONMENT_RECOVERING only after `maxOfflineMs`), and
   * `connection` when the stream opens (`open`) or drops (`reconnecting`, with why). After the process
   * closed, the overview goes on alone. Never completes by itself; errors with HostApiError when the
   * host refuses (`UNAUTHORIZED`, `FORBIDDEN_ENVIRONMENT` …) or stays unreachable past `maxOfflineMs`.
   * Cold; unsubscribing aborts the request. To select another process, subscribe anew.
   */
  watch$(selection?: WatchSelection): Observable<WatchEvent> {
    return this.lifetime.observe(watch(this.connection, selection));
  }

  /**
   * An absolute url that downloads the process's output bytes (`…/log?ticket=T`, with `&stream=` when
   * one is asked) without a token: a browser navigates to it and saves the file itself
   * (`Content-Disposition: attachment`). The ticket is good once, for 60 s, for this process only, and
   * is not the token. View tokens may ask for one. Rejects with HostApiError (`PROCESS_NOT_FOUND` …) or
   * `signal.reason` when aborted.
   */
  async logUrl(environmentId: string, processId: string, options: LogUrlOptions = {}): Promise<string> {
    const answer = await this.post(environmentId, processId, 'log/tickets', undefined, options, 'idempotent');
    return logUrlOf(answer, answer.baseUrl ?? this.connection.urls.current, options.stream);
  }

  /**
   * {@link environments$} as an async iterator: `for await (const list of client.environments()) …`.
   * At most `bufferSize` (16) snapshots wait unread; past it the oldest waiting one is dropped (each is
   * the whole state: a slow loop skips intermediate states, never the latest). The stream opens at the
   * first `next()`; a `break` (or `return()`, or aborting `signal`) closes it. Errors reject the `next()`
   * that reaches them (HostApiError as for `environments$`; `signal.reason`; ClosedError once the client
   * is disposed). Throws RangeError for a `bufferSize` that is not a whole number ≥ 1.
   */
  environments(options: SnapshotIteratorOptions = {}): AsyncIterableIterator<readonly EnvironmentOverview[]> {
    return snapshotIterator(this.environments$, options);
  }

  /** {@link processes$} as an async iterator, buffered, ended and erroring as {@link environments}. */
  processes(environmentId: string, options: SnapshotIteratorOptions = {}): AsyncIterableIterator<readonly ProcessResource[]> {
    return snapshotIterator(this.processes$(environmentId), options);
  }

  /** One environment's processes, from the overview stream, on each change; completes and errors as {@link environments$}. */
  processes$(environmentId: string): Observable<readonly ProcessResource[]> {
    return this.environments$.pipe(
      map((list) => list.find((e) => e.id === environmentId)?.processes ?? []),
      distinctUntilChanged((a, b) => JSON.stringify(a) === JSON.stringify(b)),
    );
  }

  /**
   * Starts a process. One Idempotency-Key per call (given or made), so the call's own retries never
   * start it twice. Resolves with the process; rejects with HostApiError (`SPAWN_FAILED`, …) or `signal.reason` when aborted.
   */
  async start(environmentId: string, request: StartRequest, options: HostStartOptions = {}): Promise<ProcessResource> {
    const key = options.idempotencyKey ?? newId();
    const path = `${API_PREFIX}/environments/${segment(environmentId)}/processes`;
    return startedOf(await this.request(options.signal, { method: 'POST', path, body: request, headers: { 'idempotency-key': key }, retry: 'idempotent' }));
  }

  /**
   * A process's events after `afterSeq`: each once, in order, across dropped connections and the host
   * unreachable for up to `maxOfflineMs`; `truncated` where the host no longer holds what was asked.
   * Completes after `closed` (or, with `follow: false`, once what the host holds was delivered). Errors
   * with HostApiError: a `failed` event's code, `PROCESS_GONE` (the host restarted without it),
   * `HOST_UNREACHABLE`, or the host's refusal. Cold; unsubscribing ends the stream.
   *
   * It reads the HTTP body at full speed, with no backpressure: each event is emitted as soon as it
   * arrives, and a subscriber that cannot keep up (one writing to a slow sink) holds the difference
   * itself, up to the whole output. To be held back by a slow consumer, pull the events with
   * {@link events} or {@link eventStream}.
   */
  events$(environmentId: string, processId: string, options: ProcessEventsOptions = {}): Observable<HostProcessEvent> {
    return this.lifetime.observe(processEvents(this.connection, environmentId, processId, options));
  }

  /**
   * The events of {@link events$} (the same ones, ending the same ways), pulled with backpressure as a
   * web ReadableStream: at most `highWaterMark` events (16) wait read ahead; while they do, the client
   * reads no more of the HTTP body, so TCP holds the host back instead of this side's memory. Resumption
   * after a dropped connection is by seq as for `events$`, however far behind the consumer is. It closes
   * after `closed` (or, with `follow: false`, once what the host holds was delivered) and errors with
   * HostApiError as `events$` does, each after every event before it was read; `signal.reason` when
   * `options.signal` aborts. Cold: the request starts when the stream is made; cancelling it aborts the
   * request and every wait. Throws RangeError for a `highWaterMark` that is not a whole number ≥ 0.
   */
  eventStream(environmentId: string, processId: string, options: PulledEventsOptions = {}): ReadableStream<HostProcessEvent> {
    const tracked = this.lifetime.track(options.signal);
    return pulledEvents(this.connection, environmentId, processId, { ...options, signal: tracked.signal }, tracked.release);
  }

  /**
   * {@link eventStream} as an async iterator: `for await (const event of client.events(env, id)) …`
   * reads the body only as fast as the loop body goes; a `break` (or a throw) out of the loop cancels
   * the stream and its request. Errors reject the `next()` that reaches them, after every event before.
   */
  events(environmentId: string, processId: string, options: PulledEventsOptions = {}): AsyncIterableIterator<HostProcessEvent> {
    return iterate(this.eventStream(environmentId, processId, options));
  }

  /**
   * Waits until the process has exited (the host's `POST …/wait`, like Docker's container wait).
   * Resolves with its exit code and when the host saw the exit; at once for one that has exited. Rides
   * through dropped connections and a host restart (the host's stop answers 503 and the call comes back,
   * as every call does, within `maxOfflineMs` of the host being unreachable). Rejects with HostApiError:
   * `PROCESS_NOT_FOUND` (no such process, or released), `PROCESS_GONE` (of before a host restart, lost or
   * its end unknown), the failure's code (409) for a process that failed instead of exiting,
   * `HOST_UNREACHABLE`; or with `signal.reason` when aborted (the process is not affected).
   */
  async wait(environmentId: string, processId: string, options: AbortOptions = {}): Promise<WaitResult> {
    return exitOf(await longPoll(() => this.post(environmentId, processId, 'wait', undefined, options, 'idempotent')));
  }

  /**
   * Runs a command to its end: starts it (with an Idempotency-Key, so a retried start never makes two
   * processes), reads its events with backpressure (as {@link events}), keeping at most
   * `maxOutputBytes` of each stream (the first bytes; `truncated` says some are missing), and resolves
   * once it closed with its exit code, its output as UTF-8 strings and raw bytes, and its times.
   * Rejects as {@link start} and {@link events} do (HostApiError: `SPAWN_FAILED`, `PROCESS_GONE`,
   * `HOST_UNREACHABLE` …). Aborting `signal` rejects with `signal.reason` and stops reading; the process
   * keeps running unless `terminateOnAbort` is set (then it is terminated, best effort). The process
   * stays listed on the host: {@link release} it when its record is not wanted.
   */
  run(environmentId: string, request: StartRequest, options: RunOptions = {}): Promise<RunResult> {
    return runToEnd(this, environmentId, request, options);
  }

  /**
   * One environment's files (issue 41): read and write streamed, a download resumed after a lost
   * connection, list, stat, find, mkdir, remove, copy, move and the change stream. Holds nothing open;
   * its calls and streams end with this client's {@link close} as the others do.
   */
  files(environmentId: string): HostFiles {
    return new HostFiles(this.connection, this.lifetime, environmentId);
  }

  /**
   * HTTP from inside one environment (issue 42): `fetch` (a standard fetch the environment makes, under
   * the host's allow list), and its previews' links and sharing levels. Holds nothing open; its calls and
   * bodies end with this client's {@link close}.
   */
  http(environmentId: string): HostHttp {
    return new HostHttp(this.connection, this.lifetime, environmentId);
  }

  /** Writes to stdin, once per `writeId` (made per call when not given; retries reuse it). Resolves once the executor accepted the bytes. */
  async write(environmentId: string, processId: string, data: Uint8Array | string, options: AbortOptions & { readonly writeId?: string } = {}): Promise<void> {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    await this.post(environmentId, processId, 'stdin', { writeId: options.writeId ?? newId(), data: encodeBase64(bytes) }, options, 'idempotent');
  }

  /** Ends the process's input (idempotent). */
  async endStdin(environmentId: string, processId: string, options: AbortOptions = {}): Promise<void> {
    await this.post(environmentId, processId, 'stdin/end', undefined, options, 'idempotent');
  }

  /** Sends SIGINT (exit 130 follows). Not retried after an unclear failure: a second interrupt is not the same. */
  async interrupt(environmentId: string, processId: string, options: AbortOptions = {}): Promise<void> {
    await this.post(environmentId, processId, 'interrupt', undefined, options, 'unsafe');
  }

  /** Kills the process group (exit 137 follows); resolves whether it was running. Rejects DECODE_FAILED when the answer says neither. */
  async terminate(environmentId: string, processId: string, options: AbortOptions = {}): Promise<boolean> {
    return wasRunning(await this.post(environmentId, processId, 'terminate', undefined, options, 'idempotent'));
  }

  /** Resizes a sized tty's terminal (the command gets SIGWINCH). */
  async resize(environmentId: string, processId: string, size: TtySize, options: AbortOptions = {}): Promise<void> {
    await this.post(environmentId, processId, 'resize', size, options, 'idempotent');
  }

  /** Releases a closed process (its history and its place in the list); a process already gone counts as released. */
  async release(environmentId: string, processId: string, options: AbortOptions = {}): Promise<void> {
    try {
      await this.request(options.signal, { method: 'DELETE', path: processPath(environmentId, processId), retry: 'idempotent' });
    } catch (error: unknown) {
      if (!(error instanceof HostApiError && error.code === 'PROCESS_NOT_FOUND')) throw error;
    }
  }

  /** `POST …/processes/{processId}/{action}`. */
  private post(environmentId: string, processId: string, action: string, body: unknown, options: AbortOptions, retry: RetryMode): Promise<ApiAnswer> {
    return this.request(options.signal, { method: 'POST', path: `${processPath(environmentId, processId)}/${action}`, body, retry });
  }

  /** One request, aborted by `signal` or by the client's close. */
  private request(signal: AbortSignal | undefined, request: Omit<ApiRequest, 'signal'>): Promise<ApiAnswer> {
    return this.lifetime.call(signal, (tracked) => send(this.connection, { ...request, signal: tracked }));
  }

  /**
   * Closes every open stream of this client (Observables error, iterators and event streams reject their
   * waiting read) and aborts its pending calls: each rejects with ClosedError (code `CLOSED`). Calls and
   * streams asked for afterwards fail at once the same way. What the host already did stays done (a
   * process started keeps running). Idempotent.
   */
  close(): Promise<void> {
    this.lifetime.dispose();
    return Promise.resolve();
  }

  /** {@link close} for `await using client = new HostClient(…)`: resolves once everything was told to end. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

const processPath = (environmentId: string, processId: string): string => `${API_PREFIX}/environments/${segment(environmentId)}/processes/${segment(processId)}`;
