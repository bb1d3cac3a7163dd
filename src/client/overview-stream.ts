/**
 * `HostClient.environments$`: the host's overview stream (every environment with its processes), one
 * snapshot per change, reconnecting by itself while the host is unreachable for up to `maxOfflineMs`.
 */
import * as E from 'fp-ts/lib/Either';
import { Observable } from 'rxjs';
import { HostApiError } from './host-api-error';
import { decodeWith, parseJson } from '../wire/decode';
import { API_PREFIX, Overview } from '../wire/operator-api';
import type { HostConnection } from './host-connection';
import type { EnvironmentOverview } from './host-types';
import { refusalOf, runSse } from './sse-session';

const decodeOverview = decodeWith(Overview);

/** The environments of an `overview` event's data; throws HostApiError `DECODE_FAILED` for anything else. */
export function overviewOf(data: string): readonly EnvironmentOverview[] {
  const parsed = parseJson(data);
  const snapshot = E.isRight(parsed) ? decodeOverview(parsed.right) : parsed;
  if (E.isLeft(snapshot)) throw new HostApiError('DECODE_FAILED', `overview: ${snapshot.left.message}`, undefined, undefined);
  return snapshot.right.environments;
}

/**
 * Emits the environments (each with its processes) on each change, the first snapshot as soon as the
 * stream opens. Never completes by itself; errors with HostApiError when the host refuses (401 …) or
 * stays unreachable past `maxOfflineMs`. Unsubscribing aborts the request and any wait.
 */
export function overview(connection: HostConnection): Observable<readonly EnvironmentOverview[]> {
  return new Observable<readonly EnvironmentOverview[]>((subscriber) => {
    const abort = new AbortController();
    // Progress is a change seen on a connection: every connection opens with a snapshot that only
    // restates the state, so a host (or proxy) that ends each stream right after it must not make the
    // client reconnect in a tight loop without backoff.
    let changes = 0;
    let opening = true;
    const session = {
      path: () => `${API_PREFIX}/overview`,
      finished: () => false,
      progress: () => changes,
      refusal: refusalOf('overview'),
      onOpen: () => {
        opening = true;
      },
      onEnd: () => undefined,
      onMessage: (message: { readonly event: string; readonly data: string }) => {
        if (message.event !== 'overview') return;
        const environments = overviewOf(message.data);
        if (opening) opening = false;
        else changes += 1;
        subscriber.next(environments);
      },
    };
    runSse(connection, 'overview', session, abort.signal).then(
      () => subscriber.complete(),
      (error: unknown) => {
        if (!abort.signal.aborted) subscriber.error(error);
      },
    );
    return () => abort.abort();
  });
}
