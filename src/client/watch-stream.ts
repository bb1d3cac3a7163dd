/**
 * `HostClient.watch$`: one connection (`GET /api/v1/overview?environmentId=&processId=&after=`) for the
 * overview and, optionally, one process's events: a page holds one long-lived connection per tab, not
 * two (browsers share six per host among all tabs). Reconnects by itself as `environments$` and
 * `events$` do (the same loop, `./sse-session`), resuming the process part after the last seq it
 * emitted: every output byte once, in order. Once the process closed or failed, a reconnect asks for
 * the overview alone. A process whose environment is still starting (`ENVIRONMENT_RECOVERING`) is asked
 * for again each second, up to `maxOfflineMs`, before it is a `processFailed`. Says when its connection
 * opens and drops (`connection` events).
 * `HostClient.environments$` is this watch without a selection, its snapshots only.
 */
import * as E from 'fp-ts/lib/Either';
import type { Observable } from 'rxjs';
import { filter, map } from 'rxjs/operators';
import { decodeWith, parseJson } from '../wire/decode';
import { API_PREFIX, Overview } from '../wire/operator-api';
import { HostApiError } from './host-api-error';
import type { HostConnection } from './host-connection';
import type { EnvironmentOverview, WatchConnectionEvent, WatchEvent, WatchOverviewEvent, WatchSelection } from './host-types';
import { ProcessEventReader } from './process-event-stream';
import type { SseMessage } from './sse-reader';
import type { SseSession } from './sse-session';
import { refusalOf, runSse, sse$ } from './sse-session';

const decodeOverview = decodeWith(Overview);

/** The wait before asking again for a process whose environment is starting (the host's `Retry-After` for it). */
const RECOVERING_RETRY_MS = 1000;

/** The environments of an `overview` event's data; throws HostApiError `DECODE_FAILED` for anything else. */
function overviewOf(data: string): readonly EnvironmentOverview[] {
  const parsed = parseJson(data);
  const snapshot = E.isRight(parsed) ? decodeOverview(parsed.right) : parsed;
  if (E.isLeft(snapshot)) throw new HostApiError('DECODE_FAILED', `overview: ${snapshot.left.message}`, undefined, undefined);
  return snapshot.right.environments;
}

/** The overview and the selected process's events, on one stream. */
class Watcher implements SseSession {
  private readonly reader: ProcessEventReader | undefined;
  /** Changes seen (an overview after a connection's first, or a process event): a connection that brought some resets the backoff. */
  private changes = 0;
  private opening = true;
  private state: WatchConnectionEvent['state'] | undefined;

  readonly refusal: (response: Response) => Promise<HostApiError>;
  /** Set while the selected process's environment is starting: open the stream again after this many ms. */
  private retryIn: number | undefined;
  /** When the process part was first answered ENVIRONMENT_RECOVERING (the connection's clock), since the last event of it. */
  private recoveringSince: number | undefined;

  constructor(
    private readonly selection: WatchSelection | undefined,
    private readonly emit: (event: WatchEvent) => void,
    what: string,
    private readonly connection: Pick<HostConnection, 'policy' | 'scheduler'>,
  ) {
    this.reader = selection === undefined ? undefined : new ProcessEventReader(selection.afterSeq ?? 0);
    this.refusal = refusalOf(what);
  }

  path(): string {
    const path = `${API_PREFIX}/overview`;
    if (this.selection === undefined || this.reader === undefined || this.reader.ended) return path;
    const query = new URLSearchParams({ environmentId: this.selection.environmentId, processId: this.selection.processId, after: String(this.reader.lastSeq) });
    return `${path}?${query.toString()}`;
  }

  finished(): boolean {
    return false;
  }

  progress(): number {
    return this.changes;
  }

  againAfter(): number | undefined {
    return this.retryIn;
  }

  onOpen(): void {
    this.retryIn = undefined;
    this.opening = true;
    this.state = 'open';
    this.emit({ type: 'connection', state: 'open' });
  }

  onEnd(): void {
    return undefined;
  }

  onDrop(reason: string): void {
    if (this.state === 'reconnecting') return;
    this.state = 'reconnecting';
    this.emit({ type: 'connection', state: 'reconnecting', reason });
  }

  onMessage(message: SseMessage): void {
    if (message.event === 'overview') {
      const environments = overviewOf(message.data);
      if (this.opening) this.opening = false;
      else this.changes += 1;
      this.emit({ type: 'overview', environments });
      return;
    }
    if (this.reader === undefined || !ProcessEventReader.carries(message.event)) return;
    const event = this.reader.read(message);
    if (event === undefined) return;
    if (event.type === 'failed' && event.code === 'ENVIRONMENT_RECOVERING' && this.stillWaiting()) {
      // Not a failure yet: the environment is starting (a host that just started, an executor that has
      // not dialled in). Ask again in a second, as the host's 503 for the same process says, for up to
      // maxOfflineMs; the overview goes on meanwhile.
      this.reader.ended = false;
      this.retryIn = RECOVERING_RETRY_MS;
      this.onDrop(`environment ${this.selection?.environmentId ?? ''} is starting: its process's events follow once it is connected`);
      return;
    }
    this.recoveringSince = undefined;
    this.changes += 1;
    this.emit(event.type === 'failed' ? { type: 'processFailed', code: event.code, message: event.message } : event);
  }

  /** Whether the process part has been answered ENVIRONMENT_RECOVERING for less than maxOfflineMs (starting the count at the first). */
  private stillWaiting(): boolean {
    const now = this.connection.scheduler.now();
    this.recoveringSince ??= now;
    return now - this.recoveringSince < this.connection.policy.maxOfflineMs;
  }
}

/**
 * The overview snapshots and, with `selection`, that process's events after `selection.afterSeq`, on
 * one stream (see the file comment); `connection` events when it opens and drops. Never completes by
 * itself; errors with HostApiError when the host refuses (401 `UNAUTHORIZED`, 403 …), stays
 * unreachable past `maxOfflineMs`, or sends what cannot be read (`DECODE_FAILED`, `PROCESS_GAP`).
 * Unsubscribing aborts the request and any wait. `what` names the stream in errors.
 */
export function watch(connection: HostConnection, selection?: WatchSelection, what = 'watch'): Observable<WatchEvent> {
  return sse$<WatchEvent>((emit, signal) => runSse(connection, what, new Watcher(selection, emit, what, connection), signal));
}

/**
 * `HostClient.environments$`: the environments (each with its processes) on each change, the first
 * snapshot as soon as the stream opens: the watch without a selection, its snapshots only. Progress
 * (what resets the reconnect backoff) is a change seen on a connection: every connection opens with a
 * snapshot that only restates the state, so a host (or proxy) that ends each stream right after it must
 * not make the client reconnect in a tight loop without backoff. Never completes by itself; errors with
 * HostApiError when the host refuses (401 …) or stays unreachable past `maxOfflineMs`. Unsubscribing
 * aborts the request and any wait.
 */
export function overview(connection: HostConnection): Observable<readonly EnvironmentOverview[]> {
  return watch(connection, undefined, 'overview').pipe(
    filter((event): event is WatchOverviewEvent => event.type === 'overview'),
    map((event) => event.environments),
  );
}
