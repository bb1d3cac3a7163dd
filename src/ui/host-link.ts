/**
 * The page's one seam to the host: `HostClient.watch$` (the overview and the selected process's events
 * on one connection), `host()` (who the token is) and `logUrl()` (a single-use download ticket), with
 * the client for the plain actions. The page is written against {@link HostLink}, so a spec or another
 * transport can stand in for the client.
 */
import type { Observable } from 'rxjs';
import type { HostClient, HostInfo, WatchEvent, WatchSelection } from '../client';

export type { HostCaller, HostInfo, WatchEvent, WatchSelection } from '../client';

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

/** The link over `client`. */
export function hostLink(client: HostClient): HostLink {
  return {
    client,
    watch$: (selection) => client.watch$(selection),
    host: () => client.host(),
    logUrl: (environmentId, processId) => client.logUrl(environmentId, processId),
  };
}
