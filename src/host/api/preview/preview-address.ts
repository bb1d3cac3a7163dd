/**
 * Where a preview request goes: the environment, the port and the rest of the target, read from the
 * request in one of two forms.
 * - The path form, on the preview listener: `/{environmentId}/{port}/rest…`. Works with no DNS; every
 *   preview of the host shares the listener's origin, and an app must use relative paths.
 * - The host-name form: `{port}-{environmentId}.DOMAIN`, the whole path the app's own. Each preview is an
 *   origin of its own. The label must be a DNS label (RFC 1035: at most 63 letters, digits and hyphens,
 *   starting and ending with a letter or digit); browsers lower-case host names, so only environment ids
 *   made of lower-case letters, digits and inner hyphens have this form.
 */
import { ConfigError } from '../../../errors';
import { isSafeId } from '../../../wire/safe-id';
import { ApiProblem } from '../problem';

/** Which form a preview was reached through. */
export type PreviewForm = 'path' | 'host';

/** Where one preview request goes. */
export interface PreviewAddress {
  readonly form: PreviewForm;
  readonly environmentId: string;
  /** The port in the environment (1–65535). */
  readonly port: number;
  /** What the app sees: its path and query, starting with `/`. */
  readonly rest: string;
  /** The path prefix the app is served under: `/{environmentId}/{port}` in the path form, `''` in the other. */
  readonly prefix: string;
}

const PORT = /^[1-9][0-9]{0,4}$/;
const LABEL_ID = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const HOST_LABEL = /^([1-9][0-9]{0,4})-([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)$/;
const DOMAIN = /^(?=.{1,200}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** A Host header: a name or IPv4 address, or a bracketed IPv6 one, and an optional port. */
const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

const portOf = (text: string): number | undefined => {
  if (!PORT.test(text)) return undefined;
  const port = Number(text);
  return port <= 65_535 ? port : undefined;
};

/**
 * The address of a path-form target, `'slash'` for `/{environmentId}/{port}` without its trailing slash
 * (the app's relative links need it: redirect), `undefined` for a target that is not a preview's. Throws
 * ApiProblem 400 `INVALID_ID` for an environment id or port that is not one.
 */
export function pathFormAddress(target: string): PreviewAddress | 'slash' | undefined {
  const match = /^\/([^/?]+)\/([^/?]+)(\/[^?]*)?(\?.*)?$/.exec(target);
  if (match === null) return undefined;
  const [, rawId = '', rawPort = '', path, query = ''] = match;
  let environmentId: string;
  try {
    environmentId = decodeURIComponent(rawId);
  } catch {
    throw new ApiProblem(400, 'INVALID_ID', 'the environment id of a preview path is not percent-encoded right');
  }
  if (!isSafeId(environmentId)) throw new ApiProblem(400, 'INVALID_ID', "a preview path starts /{environmentId}/{port}/: letters, digits, '.', '_' or '-' (at most 128)");
  const port = portOf(rawPort);
  if (port === undefined) throw new ApiProblem(400, 'INVALID_ID', `a preview port is a number from 1 to 65535 (got ${rawPort.slice(0, 16)})`);
  if (path === undefined) return 'slash';
  const prefix = `/${encodeURIComponent(environmentId)}/${port}`;
  return { form: 'path', environmentId, port, rest: `${path}${query}`, prefix };
}

/**
 * The address of a host-name-form request: `undefined` when `host` (the Host header) is not under
 * `domain`; throws ApiProblem 400 `INVALID_HOST` for a malformed Host, or a name under the domain that is
 * not `{port}-{environmentId}` exactly one label deep.
 */
export function hostFormAddress(host: string | undefined, domain: string, target: string): PreviewAddress | undefined {
  if (host === undefined || !HOST_HEADER.test(host)) throw new ApiProblem(400, 'INVALID_HOST', 'the Host header is missing or not a host name');
  const name = host.replace(/:[0-9]+$/, '').toLowerCase().replace(/\.$/, '');
  if (!name.endsWith(`.${domain}`)) return undefined;
  const label = name.slice(0, -(domain.length + 1));
  const match = HOST_LABEL.exec(label);
  const port = match === null ? undefined : portOf(match[1] ?? '');
  const environmentId = match?.[2];
  if (port === undefined || environmentId === undefined || label.length > 63) {
    throw new ApiProblem(400, 'INVALID_HOST', `a preview host name is {port}-{environmentId}.${domain}, one DNS label (got ${label.slice(0, 80)})`);
  }
  return { form: 'host', environmentId, port, rest: target.startsWith('/') ? target : `/${target}`, prefix: '' };
}

/** The host-name form's name of a preview, or `undefined` when the environment id cannot be a DNS label (upper case, `.`, `_`, too long). */
export function hostFormName(environmentId: string, port: number, domain: string): string | undefined {
  const label = `${port}-${environmentId}`;
  return LABEL_ID.test(environmentId) && label.length <= 63 ? `${label}.${domain}` : undefined;
}

/**
 * The preview domain, lower-cased and checked: DNS labels, at least two of them, and neither one of the
 * host's own names nor a parent of one (a preview must never share the host's origin or be able to set
 * its cookies). Throws a ConfigError.
 */
export function checkPreviewDomain(domain: string, hostNames: readonly string[]): string {
  const normal = domain.toLowerCase().replace(/\.$/, '');
  if (!DOMAIN.test(normal) || !normal.includes('.')) throw new ConfigError(`--preview-domain ${domain} is not a domain of two or more DNS labels`);
  for (const raw of hostNames) {
    const own = raw.toLowerCase().replace(/\.$/, '');
    if (own === normal || own.endsWith(`.${normal}`)) {
      throw new ConfigError(`--preview-domain ${domain} is the host's own name or a parent of it (${raw}): previews would share the host's site; choose a domain of its own`);
    }
  }
  return normal;
}
