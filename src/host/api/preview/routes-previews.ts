/**
 * The operator API's rows for HTTP through the environments: `…/previews` (the public ports), `…/previews/{port}`
 * (a port's sharing level, audited), `…/previews/{port}/links` (a signed link, audited) and `…/fetch` (a
 * request made from inside the environment, `./fetch-route`). Every row needs `operate`; the sharing level
 * and the fetch go to the environment's owner (its executor and its previews are there).
 */
import { API_PREFIX } from '../../../wire/operator-api';
import { SharingChange } from '../../../wire/http-api';
import type { PreviewList } from '../../../wire/http-api';
import { refuseIfElsewhere } from '../api-context';
import { readJsonBody } from '../json-body';
import { ApiProblem } from '../problem';
import { sendApiJson } from '../responses';
import type { Route, RouteContext } from '../router';
import type { FetchRouteDeps } from './fetch-route';
import { fetchThrough } from './fetch-route';
import { disabled } from './http-settings';
import type { OperatorCaller } from '../operator-tokens';
import type { PreviewLink, PreviewSharing } from '../../../wire/http-api';

/** What the rows ask of the previews (`HostPreviews`). */
export interface PreviewControls {
  /** A signed link to `port` of `environmentId` for `caller`. */
  link(caller: OperatorCaller, environmentId: string, port: number): PreviewLink;
  /** Sets `port`'s sharing level. */
  share(environmentId: string, port: number, sharing: PreviewSharing): void;
  /** The ports of `environmentId` an operator made public. */
  sharedPorts(environmentId: string): PreviewList['previews'];
  /** A preview request another replica forwarded here (404 for any call not so signed). */
  forwardedRequest(route: RouteContext, port: number): Promise<void>;
}

/** The rows (see the module's doc). */
export function previewRows(previews: PreviewControls, deps: FetchRouteDeps): Route[] {
  const base = `${API_PREFIX}/environments/{environmentId}/previews`;
  const on = (handler: (route: RouteContext) => Promise<void>) => async (route: RouteContext) => {
    if (!deps.settings.enabled) throw disabled();
    await handler(route);
  };
  return [
    {
      path: base,
      operate: true,
      methods: {
        GET: on(async ({ res, params }) => {
          const environmentId = params['environmentId'] ?? '';
          const list: PreviewList = { environmentId, previews: previews.sharedPorts(environmentId) };
          sendApiJson(res, deps.api.hostInstance, 200, list);
        }),
      },
    },
    {
      path: `${base}/{port}`,
      operate: true,
      owner: ['PUT'],
      audit: { PUT: 'preview share' },
      methods: {
        PUT: on(async ({ req, res, params, audit }) => {
          const environmentId = params['environmentId'] ?? '';
          const port = portParam(params['port']);
          await refuseIfElsewhere(deps.api, environmentId);
          const change = await readJsonBody(req, SharingChange, deps.api.maxBodyBytes);
          previews.share(environmentId, port, change.sharing);
          if (audit !== undefined) audit.target = `port ${port}: ${change.sharing}`;
          sendApiJson(res, deps.api.hostInstance, 200, { port, sharing: change.sharing });
        }),
      },
    },
    {
      path: `${base}/{port}/links`,
      operate: true,
      audit: { POST: 'preview link' },
      methods: {
        POST: on(async ({ res, params, caller, audit }) => {
          const environmentId = params['environmentId'] ?? '';
          const port = portParam(params['port']);
          const made = previews.link(caller, environmentId, port);
          if (audit !== undefined) audit.target = `port ${port}, until ${made.expiresAt}`;
          sendApiJson(res, deps.api.hostInstance, 201, made);
        }),
      },
    },
    {
      // Replicas only: a preview that reached another replica, forwarded to the owner (signed; 404 otherwise).
      path: `${base}/{port}/request`,
      reads: ['POST', 'PUT', 'DELETE', 'PATCH'],
      methods: Object.fromEntries(
        (['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const).map((method) => [method, on((route) => previews.forwardedRequest(route, portParam(route.params['port'])))]),
      ),
    },
    {
      path: `${API_PREFIX}/environments/{environmentId}/fetch`,
      operate: true,
      owner: ['POST'],
      audit: { POST: 'fetch' },
      methods: {
        POST: on((route) => fetchThrough(deps, route)),
      },
    },
  ];
}

function portParam(text: string | undefined): number {
  const port = Number(text);
  if (text === undefined || !/^[1-9][0-9]{0,4}$/.test(text) || port > 65_535) {
    throw new ApiProblem(400, 'INVALID_ID', `a port is a number from 1 to 65535 (got ${text?.slice(0, 16) ?? 'none'})`);
  }
  return port;
}
