/**
 * One directory followed live: its change stream (`HostFiles.changes$`), and its listing each time that
 * stream opens (the first time, and after a reopening: the host reports changes from the directory as it
 * was at the open, so a listing asked for then misses nothing). Changes that come while a listing is
 * under way are handed on after it. A refusal (4xx: missing, not a directory, forbidden, invalid path) ends
 * it; anything else is tried again after {@link RETRY_MS}.
 */
import type { Observable } from 'rxjs';
import { EMPTY, Subject, catchError, defer, ignoreElements, merge, retry, switchMap, tap, throwError, timer } from 'rxjs';
import type { FileChange, FileListing, HostFiles } from '../client';
import { HostApiError } from '../client';

/** How long it waits before it follows the directory again after its stream failed. */
export const RETRY_MS = 5000;

/** Where a follower is. */
export type FollowState = 'listing' | 'live' | 'retrying' | 'failed';

/** What a follower tells. */
export interface FollowSink {
  listed(listing: FileListing): void;
  changed(change: FileChange): void;
  state(state: FollowState, error?: unknown): void;
}

/** Why something failed, as the host said it. */
export const reasonOf = (error: unknown): string => (error instanceof HostApiError ? (error.detail ?? error.message) : error instanceof Error ? error.message : String(error));

/** Follows `dir` (see the module's doc) while subscribed. */
export function followDirectory(files: HostFiles, dir: string, sink: FollowSink): Observable<never> {
  return defer(() => {
    sink.state('listing');
    const opened$ = new Subject<void>();
    let listed = false;
    const early: FileChange[] = [];
    const listings = opened$.pipe(
      switchMap(() => files.list(dir)),
      tap((listing) => {
        sink.listed(listing);
        listed = true;
        for (const change of early.splice(0)) sink.changed(change);
        sink.state('live');
      }),
    );
    const onOpen = (): void => {
      listed = false;
      sink.state('listing');
      opened$.next();
    };
    const changes = files.changes$(dir, { onOpen }).pipe(tap((change) => (listed ? sink.changed(change) : early.push(change))));
    return merge(listings, changes).pipe(ignoreElements());
  }).pipe(
    retry({
      delay: (error: unknown) => {
        if (error instanceof HostApiError && error.status !== undefined && error.status >= 400 && error.status < 500) return throwError(() => error);
        sink.state('retrying', error);
        return timer(RETRY_MS);
      },
    }),
    catchError((error: unknown) => {
      sink.state('failed', error);
      return EMPTY;
    }),
  );
}
