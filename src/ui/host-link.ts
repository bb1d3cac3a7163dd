/**
 * The page's one seam to the host: the shapes of `exec-rx/client`'s `HostClient.watch$`, `host()` and
 * `logUrl()` (issue 23's contract, section 1), so the rest of the page is written against them.
 *
 * Interim: until those land in `exec-rx/client`, {@link hostLink} builds them from what the client has
 * today: the overview from `environments$`, the selected process from `events$` (two connections, not
 * one), `host()` from `GET /api/v1/host` (no `caller` yet: the role is taken as `operate`), and no log
 * tickets (`logUrl()` rejects). Once the client has them, this module only forwards.
 */
import type { Observable } from 'rxjs';
import { catchError, concat, map, merge, of, startWith } from 'rxjs';
import type { EnvironmentOverview, HostClient, HostProcessEvent } from '../client';
import { HostApiError } from '../client';

/** Who the token is (`GET /api/v1/host`'s `caller`). */
export interface HostCaller {
  readonly name: string;
  readonly role: 'view' | 'operate';
  readonly environments: readonly string[] | null;
}

/** What `host()` answers. */
export interface HostInfo {
  readonly hostInstance: string;
  readonly caller: HostCaller;
}

/** The process the one connection carries besides the overview. */
export interface WatchSelection {
  readonly environmentId: string;
  readonly processId: string;
  /** Resume after this seq (what the page already has). @default from the start */
  readonly afterSeq?: number;
}

/** What the one connection carries. */
export type WatchEvent =
  | { readonly type: 'overview'; readonly environments: readonly EnvironmentOverview[] }
  | HostProcessEvent
  | { readonly type: 'processFailed'; readonly code: string; readonly message: string }
  | { readonly type: 'connection'; readonly state: 'open' | 'reconnecting'; readonly reason?: string };

/** The calls the page makes on the host, beside the plain actions of `HostClient`. */
export interface HostLink {
  readonly client: HostClient;
  /** The overview and (optionally) one process's events on one connection; errors only when the host refuses. */
  watch$(selection?: WatchSelection): Observable<WatchEvent>;
  /** Who the token is. */
  host(): Promise<HostInfo>;
  /** A url carrying a single-use ticket (never the token) that downloads a process's whole output. */
  logUrl(environmentId: string, processId: string): Promise<string>;
}

/** The link over `client` (see the module's note on what is interim). `baseUrl` and `token` serve `host()` until the client has it. */
export function hostLink(client: HostClient, baseUrl: string, token: () => string): HostLink {
  return {
    client,
    watch$: (selection) => {
      const overview$ = client.environments$.pipe(map((environments): WatchEvent => ({ type: 'overview', environments })));
      const open: WatchEvent = { type: 'connection', state: 'open' };
      if (selection === undefined) return overview$.pipe(startWith(open));
      const process$ = client
        .events$(selection.environmentId, selection.processId, selection.afterSeq === undefined ? {} : { afterSeq: selection.afterSeq })
        .pipe(
          catchError((error: unknown) => {
            if (error instanceof HostApiError && (error.status === 401 || error.code === 'HOST_UNREACHABLE')) throw error;
            const code = error instanceof HostApiError ? error.code : 'FAILED';
            const message = error instanceof Error ? error.message : String(error);
            return of<WatchEvent>({ type: 'processFailed', code, message });
          }),
        );
      return concat(of(open), merge(overview$, process$));
    },
    host: async () => {
      const answer = await fetch(`${baseUrl}/api/v1/host`, { headers: { authorization: `Bearer ${token()}` } });
      if (!answer.ok) throw new HostApiError(answer.status === 401 ? 'UNAUTHORIZED' : 'HOST_ERROR', `the host answered ${answer.status}`, answer.status, undefined);
      const body = (await answer.json()) as { hostInstance?: unknown; caller?: HostCaller };
      return { hostInstance: String(body.hostInstance), caller: body.caller ?? { name: 'operator', role: 'operate', environments: null } };
    },
    logUrl: () => Promise.reject(new Error('downloads need log tickets, which this host does not offer yet')),
  };
}
