import type { Observable, SchedulerLike } from 'rxjs';
import { asyncScheduler, BehaviorSubject, EMPTY, timer } from 'rxjs';
import { catchError, switchMap } from 'rxjs/operators';
import type { DialOptions } from '../transport/dial';
import { dial } from '../transport/dial';
import type { SocketPort } from '../transport/socket-port';
import type { ExecClient } from './exec-client';

/** The first re-dial after a drop is immediate; then 100 ms, doubling, at most this. */
export const MAX_REDIAL_DELAY_MS = 1_000;

/**
 * The sockets of a listening executor: the first dial, then a re-dial of the same url (its headers
 * evaluated again when they are a function) each time the client loses its connection or a resume
 * attempt fails retryably. A failed first dial errors the stream (the client then fails and `connect`
 * rejects); a failed re-dial (refused, 401, a headers function that threw ...) is reported to the client
 * as a failed attempt (its state shows the error) and tried again with backoff until the client's
 * recovery deadline ends it.
 */
export class DialledSockets {
  private readonly requests = new BehaviorSubject<number>(0);
  private attempt = 0;
  private everConnected = false;
  private client: ExecClient | undefined;

  /** The dialled sockets; completes when the client fails or closes. */
  readonly sockets$: Observable<SocketPort>;

  constructor(
    url: string,
    options: DialOptions,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    this.sockets$ = this.requests.pipe(
      switchMap((delayMs) =>
        timer(delayMs, this.scheduler).pipe(
          switchMap(() => dial(url, options)),
          catchError((error: unknown) => {
            if (!this.everConnected) throw error;
            // The client shows the error and answers `retry`, which re-dials.
            if (this.client === undefined) this.redial();
            else this.client.dialFailed(error);
            return EMPTY;
          }),
        ),
      ),
    );
  }

  /** Re-dials as the client reports each attempt's outcome. */
  watch(client: ExecClient): void {
    this.client = client;
    client.attempts$.subscribe({
      next: (outcome) => {
        if (outcome === 'attached') {
          this.everConnected = true;
          this.attempt = 0;
        } else if (outcome === 'lost' || outcome === 'retry') this.redial();
      },
      complete: () => this.requests.complete(),
    });
  }

  private redial(): void {
    const delayMs = this.attempt === 0 ? 0 : Math.min(100 * 2 ** (this.attempt - 1), MAX_REDIAL_DELAY_MS);
    this.attempt += 1;
    this.requests.next(delayMs);
  }
}
