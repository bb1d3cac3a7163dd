/**
 * `HostClient.watch$`: one connection (`GET /api/v1/overview?environmentId=&processId=&after=`) for the
 * overview and, optionally, one process's events: a page holds one long-lived connection per tab, not
 * two (browsers share six per host among all tabs). Reconnects by itself as `environments$` and
 * `events$` do (the same loop, `./sse-session`), resuming the process part after the last seq it
 * emitted: every output byte once, in order. Once the process closed or failed, a reconnect asks for
 * the overview alone. Says when its connection opens and drops (`connection` events).
 */
import { Observable } from 'rxjs';
import { API_PREFIX } from '../wire/operator-api';
import type { HostConnection } from './host-connection';
import type { WatchConnectionEvent, WatchEvent, WatchSelection } from './host-types';
import { overviewOf } from './overview-stream';
import { ProcessEventReader } from './process-event-stream';
import type { SseMessage } from './sse-reader';
import type { SseSession } from './sse-session';
import { refusalOf, runSse } from './sse-session';

/** The overview and the selected process's events, on one stream. */
class Watcher implements SseSession {
  private readonly reader: ProcessEventReader | undefined;
  /** Changes seen (an overview after a connection's first, or a process event): a connection that brought some resets the backoff. */
  private changes = 0;
  private opening = true;
  private state: WatchConnectionEvent['state'] | undefined;

  constructor(
    private readonly selection: WatchSelection | undefined,
    private readonly emit: (event: WatchEvent) => void,
  ) {
    this.reader = selection === undefined ? undefined : new ProcessEventReader(selection.afterSeq ?? 0);
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

  readonly refusal = refusalOf('watch');

  onOpen(): void {
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
    this.changes += 1;
    this.emit(event.type === 'failed' ? { type: 'processFailed', code: event.code, message: event.message } : event);
  }
}

/**
 * The overview snapshots and, with `selection`, that process's events after `selection.afterSeq`, on
 * one stream (see the file comment); `connection` events when it opens and drops. Never completes by
 * itself; errors with HostApiError when the host refuses (401 `UNAUTHORIZED`, 403 …), stays
 * unreachable past `maxOfflineMs`, or sends what cannot be read (`DECODE_FAILED`, `PROCESS_GAP`).
 * Unsubscribing aborts the request and any wait.
 */
export function watch(connection: HostConnection, selection?: WatchSelection): Observable<WatchEvent> {
  return new Observable<WatchEvent>((subscriber) => {
    const abort = new AbortController();
    runSse(connection, 'watch', new Watcher(selection, (event) => subscriber.next(event)), abort.signal).then(
      () => subscriber.complete(),
      (error: unknown) => {
        if (!abort.signal.aborted) subscriber.error(error);
      },
    );
    return () => abort.abort();
  });
}
