/**
 * The operator API's file routes (docs/operator-api.md, "Files"): rows of the route table under
 * `/api/v1/environments/{environmentId}/files`, built by {@link HostFiles}, which also owns what they share
 * (the per-environment queues, the roots, the upload sweeper and the change pollers) and stops it with the
 * host. Every row needs the `operate` role, GET and HEAD included (`operate: true`), and every method is
 * `owner`: with replicas that forward, a call goes to the replica that holds the environment's executor.
 */
import type { SchedulerLike } from 'rxjs';
import { API_PREFIX } from '../../../wire/operator-api';
import type { HostLogger } from '../../host-logger';
import type { ApiContext } from '../api-context';
import type { Route, RouteContext } from '../router';
import { ChangeWatches } from './change-watches';
import { streamChanges } from './file-changes';
import { getContent, headContent } from './file-download';
import { checkedPath } from './file-path';
import { fileTicketScope, find, getMetadata, issueFileTicket, listEntries } from './file-reads';
import { FileRoots } from './file-roots';
import { putContent } from './file-upload';
import { copyPath, makeDirectory, movePath, removePath } from './file-writes';
import type { FilesContext } from './files-context';
import { sharedPerEnvironment } from './files-context';
import type { FilesOptions } from './files-options';
import { filesSettings } from './files-options';
import { UploadSweeper } from './upload-sweeper';

/** The base of the file routes. */
export const FILES = `${API_PREFIX}/environments/{environmentId}/files`;

/** The file routes and what they share (see the module's doc). */
export class HostFiles {
  /** The rows of the route table. */
  readonly rows: readonly Route[];
  private readonly context: FilesContext;

  /** Throws a RangeError for an option out of range (see `filesSettings`). */
  constructor(api: ApiContext, options: FilesOptions | undefined, scheduler: SchedulerLike, log?: HostLogger) {
    const settings = filesSettings(options);
    const sharedOf = sharedPerEnvironment(settings, scheduler);
    this.context = {
      api,
      settings,
      roots: new FileRoots(settings.roots.map((root) => checkedPath(root))),
      log,
      uploads: new UploadSweeper(api.environments, sharedOf, scheduler),
      watches: new ChangeWatches(api.environments, sharedOf, scheduler),
      sharedOf,
    };
    this.rows = fileRows(this.context);
  }

  /** Pollers running now, one per watched directory (bookkeeping). */
  get watchedDirectories(): number {
    return this.context.watches.size;
  }

  /** Stops the sweeper's schedule and every poller (the host stops). */
  close(): void {
    this.context.uploads.close();
    this.context.watches.close();
  }
}

/** The methods of every file row: all of them `owner`. */
const ALL = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'] as const;

/** The rows (see the module's doc). */
function fileRows(files: FilesContext): Route[] {
  const on = (handler: (files: FilesContext, route: RouteContext) => Promise<void>) => (route: RouteContext) => handler(files, route);
  const row = { operate: true, owner: ALL } as const;
  return [
    {
      ...row,
      path: FILES,
      audit: { DELETE: 'file remove' },
      methods: { DELETE: on(removePath) },
    },
    {
      ...row,
      path: `${FILES}/content`,
      audit: { PUT: 'file write' },
      // A browser downloads by navigating, without a header: a ticket made for this very file stands for the token.
      ticket: async (ticket, params, query) => {
        let scope: string;
        try {
          scope = fileTicketScope(checkedPath(query.getAll('path').length === 1 ? (query.get('path') ?? undefined) : undefined));
        } catch {
          return undefined;
        }
        return files.api.tickets.redeem(ticket, params['environmentId'] ?? '', scope);
      },
      methods: { GET: on(getContent), HEAD: on(headContent), PUT: on(putContent) },
    },
    { ...row, path: `${FILES}/content/tickets`, methods: { POST: on(issueFileTicket) } },
    { ...row, path: `${FILES}/metadata`, methods: { GET: on(getMetadata) } },
    { ...row, path: `${FILES}/entries`, methods: { GET: on(listEntries) } },
    { ...row, path: `${FILES}/find`, methods: { GET: on(find) } },
    { ...row, path: `${FILES}/changes`, methods: { GET: on(streamChanges) } },
    { ...row, path: `${FILES}/directories`, audit: { POST: 'mkdir' }, methods: { POST: on(makeDirectory) } },
    { ...row, path: `${FILES}/copy`, audit: { POST: 'file copy' }, methods: { POST: on(copyPath) } },
    { ...row, path: `${FILES}/move`, audit: { POST: 'file move' }, methods: { POST: on(movePath) } },
  ];
}
