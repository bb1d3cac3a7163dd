/**
 * The headers every download of an environment's file carries. An agent writes these files, so nothing
 * the host serves from its own origin may run there: always `Content-Disposition: attachment` (the
 * browser saves, never renders), `X-Content-Type-Options: nosniff` and `Content-Security-Policy: sandbox;
 * default-src 'none'` (what does render runs in a sandbox with no scripts and nothing loaded). The type
 * comes from the name's extension (`application/octet-stream` otherwise). `?disposition=inline` is
 * honoured only for `text/plain` and raster images (png, jpeg, gif, webp): a text view or an image preview,
 * nothing that can hold a script (never HTML, SVG or PDF).
 */

/** Content types by extension (lower case); anything else is `application/octet-stream`. */
const TYPES: Readonly<Record<string, string>> = {
  txt: 'text/plain; charset=utf-8',
  log: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
};

/** The types a download may be shown inline as. */
const INLINE = new Set(['text/plain; charset=utf-8', 'image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The content type of a file named `name`. */
export function contentTypeOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return (dot > 0 ? TYPES[name.slice(dot + 1).toLowerCase()] : undefined) ?? 'application/octet-stream';
}

/** `attachment` (or `inline`) with an ASCII `filename` and the exact name as `filename*` (RFC 6266, 8187). */
export function dispositionOf(name: string, inline: boolean): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%;]/g, '_') || 'download';
  const exact = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

/** The headers of a download of `name` (see the module's doc); `wantsInline`: the request's `?disposition=inline`. */
export function contentHeaders(name: string, wantsInline: boolean): Record<string, string> {
  const type = contentTypeOf(name);
  return {
    'content-type': type,
    'content-disposition': dispositionOf(name, wantsInline && INLINE.has(type)),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "sandbox; default-src 'none'",
    'cache-control': 'private, no-cache',
    'accept-ranges': 'bytes',
  };
}
