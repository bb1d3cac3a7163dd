/**
 * What a preview changes in the headers on the way in and out. In: hop-by-hop headers, the host's own
 * `Authorization` and preview cookies, `Accept-Encoding` (the executor asks for what it decodes itself)
 * and the client's `X-Forwarded-*` go; the target gets `Host: 127.0.0.1:PORT` (Vite and webpack-dev-server
 * refuse foreign hosts) and our `X-Forwarded-Host`/`-Proto`/`-Prefix`/`-For`. Out: hop-by-hop headers go,
 * `Location` and `Set-Cookie` are rewritten for the path form, the `Domain=` of a cookie is stripped, a
 * cookie named like ours is dropped, and the sandbox CSP and `Referrer-Policy: no-referrer` are added.
 */
import { withoutHopByHop } from '../../../http/http-headers';
import type { HttpHeader } from '../../../wire/http';
import type { PreviewAddress } from './preview-address';

/** The prefix of the host's own preview cookies (a session cookie per preview). */
export const PREVIEW_COOKIE_PREFIX = '__Host-exec-rx-preview';

/**
 * The sandbox every preview answer carries: scripts, forms, popups, modals and downloads work, and the page
 * keeps its own origin (the preview's, never the host's: its cookies and storage work, and it cannot read
 * the operator API, which answers no cross-origin read and takes no cookie).
 */
export const PREVIEW_CSP = 'sandbox allow-scripts allow-forms allow-same-origin allow-popups allow-modals allow-downloads';

/** Request headers the client may not pass to the target (the host sets its own or none). */
const DROPPED_IN: ReadonlySet<string> = new Set([
  'host',
  'accept-encoding',
  'content-length',
  'forwarded',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-prefix',
  'x-forwarded-for',
  'x-forwarded-port',
]);

/** Response headers the browser does not get from the target. */
const DROPPED_OUT: ReadonlySet<string> = new Set(['strict-transport-security', 'content-length']);

/** The cookie a preview's session is kept in (one per preview in the path form, whose previews share an origin). */
export function sessionCookieName(address: PreviewAddress): string {
  return address.form === 'host' ? PREVIEW_COOKIE_PREFIX : `${PREVIEW_COOKIE_PREFIX}-${address.environmentId}-${address.port}`;
}

/** The value of cookie `name` in a `Cookie` header, when there is exactly one. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const values = header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${name}=`))
    .map((pair) => pair.slice(name.length + 1));
  return values.length === 1 ? values[0] : undefined;
}

/** What the request side needs to know. */
export interface InboundFacts {
  readonly address: PreviewAddress;
  /** The request's Host header as the browser sent it. */
  readonly host: string | undefined;
  readonly proto: 'http' | 'https';
  readonly clientAddress: string | undefined;
  /** The request's `Authorization` was an operator token: it is the host's, not the app's. */
  readonly dropAuthorization: boolean;
}

/** The request's headers as the target gets them (see the module's doc). */
export function inboundHeaders(rawHeaders: readonly string[], facts: InboundFacts): HttpHeader[] {
  const pairs: HttpHeader[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? '').toLowerCase();
    const value = rawHeaders[i + 1] ?? '';
    if (DROPPED_IN.has(name) || name.startsWith('exec-rx-')) continue;
    if (name === 'authorization' && facts.dropAuthorization) continue;
    if (name === 'cookie') {
      const kept = value
        .split(';')
        .map((pair) => pair.trim())
        .filter((pair) => pair !== '' && !pair.startsWith(PREVIEW_COOKIE_PREFIX))
        .join('; ');
      if (kept !== '') pairs.push({ name, value: kept });
      continue;
    }
    pairs.push({ name, value });
  }
  const { address } = facts;
  return [
    ...withoutHopByHop(pairs),
    { name: 'host', value: `127.0.0.1:${address.port}` },
    ...(facts.host === undefined ? [] : [{ name: 'x-forwarded-host', value: facts.host }]),
    { name: 'x-forwarded-proto', value: facts.proto },
    ...(address.prefix === '' ? [] : [{ name: 'x-forwarded-prefix', value: address.prefix }]),
    ...(facts.clientAddress === undefined ? [] : [{ name: 'x-forwarded-for', value: facts.clientAddress }]),
  ];
}

/** The target's answer headers as the browser gets them, as `[name, value]` pairs for `writeHead` (see the module's doc). */
export function outboundHeaders(headers: readonly HttpHeader[], address: PreviewAddress): [string, string][] {
  const out: [string, string][] = [];
  for (const { name: raw, value } of withoutHopByHop(headers)) {
    const name = raw.toLowerCase();
    if (DROPPED_OUT.has(name)) continue;
    if (name === 'location') out.push([name, rewriteLocation(value, address)]);
    else if (name === 'set-cookie') {
      const cookie = rewriteSetCookie(value, address);
      if (cookie !== undefined) out.push([name, cookie]);
    } else out.push([name, value]);
  }
  out.push(['content-security-policy', PREVIEW_CSP], ['referrer-policy', 'no-referrer'], ['x-content-type-options', 'nosniff']);
  return out;
}

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A `Location` for the browser: an absolute path gets the path form's prefix; an absolute url of the
 * target itself (`http://127.0.0.1:PORT/…`, `localhost`, `[::1]`) becomes a path on the preview; anything
 * else (relative, another site) is left as it is.
 */
export function rewriteLocation(location: string, address: PreviewAddress): string {
  if (location.startsWith('/') && !location.startsWith('//')) return `${address.prefix}${location}`;
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return location;
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !LOOPBACK_NAMES.has(url.hostname) || port !== address.port) return location;
  return `${address.prefix}${url.pathname}${url.search}${url.hash}`;
}

/**
 * A `Set-Cookie` for the browser: its `Domain=` stripped (a preview may not set cookies for other names);
 * in the path form its `Path` put under the prefix (`/` when it had none); `undefined` for a cookie named
 * like the host's own.
 */
export function rewriteSetCookie(value: string, address: PreviewAddress): string | undefined {
  const [first = '', ...attributes] = value.split(';');
  if (first.trim().startsWith(PREVIEW_COOKIE_PREFIX)) return undefined;
  const kept: string[] = [first.trim()];
  let hasPath = false;
  for (const attribute of attributes) {
    const trimmed = attribute.trim();
    const key = trimmed.split('=')[0]?.trim().toLowerCase() ?? '';
    if (key === 'domain' || trimmed === '') continue;
    if (key === 'path') {
      hasPath = true;
      const path = trimmed.slice(trimmed.indexOf('=') + 1).trim();
      kept.push(`Path=${address.prefix}${path.startsWith('/') ? path : `/${path}`}`);
      continue;
    }
    kept.push(trimmed);
  }
  if (!hasPath && address.prefix !== '') kept.push(`Path=${address.prefix}/`);
  return kept.join('; ');
}
