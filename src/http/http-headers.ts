import type { HttpHeader } from '../wire/http';

/**
 * The hop-by-hop header names (RFC 9110 7.6.1, lowercase): `connection`, `keep-alive`,
 * `proxy-authenticate`, `proxy-authorization`, `proxy-connection`, `te`, `trailer`, `transfer-encoding`,
 * `upgrade`. {@link withoutHopByHop} drops these, any other `proxy-*` name, and what a `Connection` header names.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The headers without hop-by-hop ones ({@link HOP_BY_HOP}, any `proxy-*`) and without those a `Connection`
 * header names (names compared lowercase), in their order. A new array; the input is not changed.
 */
export function withoutHopByHop(headers: readonly HttpHeader[]): HttpHeader[] {
  const named = new Set<string>();
  for (const header of headers) {
    if (header.name.toLowerCase() !== 'connection') continue;
    for (const token of header.value.split(',')) {
      const name = token.trim().toLowerCase();
      if (name !== '') named.add(name);
    }
  }
  return headers.filter((header) => {
    const name = header.name.toLowerCase();
    return !HOP_BY_HOP.has(name) && !name.startsWith('proxy-') && !named.has(name);
  });
}
