/**
 * What the preview specs share: a host with `--allow-http` and a preview listener, its executor, a
 * python target in the environment, and raw requests to the preview listener (Host, cookies and bodies as
 * given: node:http).
 */
import type { Environment } from '../../../../src';
import type { OperatorApiOptions } from '../../../../src/host/api/operator-api';
import type { PreviewLink } from '../../../../src/wire/http-api';
import { API_PREFIX } from '../../../../src/wire/operator-api';
import type { HttpTarget } from '../../../support/http-target';
import { startHttpTarget } from '../../../support/http-target';
import type { ApiHost, ApiHostOptions } from '../api-host';
import { expectStatus, OPERATOR_TOKEN, startApiHost } from '../api-host';
import type { RawOptions, RawResponse } from '../files-support';
import { raw } from '../files-support';

/** A host serving previews, its environment and a target in it. */
export interface PreviewHost extends ApiHost {
  /** The preview listener's base url. */
  readonly previewUrl: string;
  /** The environment as the host holds it (to start targets). */
  readonly environment: Environment;
}

/** Starts a host with `--allow-http` on a preview port, and its executor. */
export async function startPreviewHost(options: ApiHostOptions & { readonly http?: OperatorApiOptions['http'] }): Promise<PreviewHost> {
  const started = await startApiHost({
    ...options,
    operator: { ...options.operator, http: { enabled: true, ...options.http } },
    host: { previewPort: 0, ...options.host },
  });
  const previewUrl = started.host.previewUrl;
  const environment = started.host.environment(options.environmentId)?.environment;
  if (previewUrl === undefined || environment === undefined) throw new Error('no preview listener or environment');
  return { ...started, previewUrl, environment };
}

/** Starts the python target in the host's environment. */
export function startTarget(host: PreviewHost, port?: number): Promise<HttpTarget> {
  return startHttpTarget(host.environment, port);
}

/** A raw request to the preview listener (no token unless `options.token`). */
export function preview(host: PreviewHost, method: string, path: string, options: RawOptions = {}): Promise<RawResponse> {
  return raw(host.previewUrl, method, path, options);
}

/** A link to `port`'s preview, made through the API with the operator token. */
export async function makeLink(host: ApiHost, port: number, token = OPERATOR_TOKEN): Promise<PreviewLink> {
  const answer = await host.api.as(token).post(`${API_PREFIX}/environments/${host.environmentId}/previews/${port}/links`);
  return expectStatus(answer, 201) as PreviewLink;
}

/** The path and query of a url (what a raw request sends). */
export const pathOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/** Exchanges a link for its session cookie (`name=value`), asserting the 303 on the way. */
export async function sessionCookie(host: PreviewHost, link: PreviewLink): Promise<{ readonly cookie: string; readonly answer: RawResponse }> {
  const answer = await preview(host, 'GET', pathOf(link.pathUrl));
  const setCookie = answer.headers['set-cookie']?.[0] ?? '';
  return { cookie: setCookie.split(';')[0] ?? '', answer };
}
