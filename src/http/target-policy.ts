import { ConfigError, HttpTargetRefusedError } from '../errors';
import type { IpBytes } from './ip-address';
import { formatIp, inRange, masked, parseIp, unmapped } from './ip-address';

/** The library's default allow list: the executor's own loopback addresses. */
export const LOOPBACK_TARGETS: readonly string[] = ['127.0.0.1', '::1'];

/** Cloud metadata addresses (AWS IMDS and ECS, AWS IPv6, Alibaba, Azure wire server): reached only when named exactly. */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200', '168.63.129.16']);
/** Cloud metadata names: reached only when named exactly. */
const METADATA_NAMES: ReadonlySet<string> = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);
/** Link-local ranges: reached only when an address in them is named exactly. */
const LINK_LOCAL: readonly { readonly network: IpBytes; readonly prefix: number }[] = [
  { network: Uint8Array.of(169, 254, 0, 0), prefix: 16 },
  { network: Uint8Array.of(0xfe, 0x80, ...new Array<number>(14).fill(0)), prefix: 10 },
];
/** The unspecified addresses: reached only when named exactly. */
const UNSPECIFIED: ReadonlySet<string> = new Set(['0.0.0.0', '::']);

/** A host name as entries and targets compare it: lowercase, without its trailing dot. */
const NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/;

interface Range {
  readonly network: IpBytes;
  readonly prefix: number;
}

/** A target's host: an address (IPv4-mapped IPv6 taken as its IPv4) or a name. */
type Host = { readonly type: 'address'; readonly address: IpBytes; readonly text: string } | { readonly type: 'name'; readonly text: string };

/**
 * Which URLs a request made from inside an environment may reach (`Environment.fetch`, the host's
 * previews): `http:` and `https:` URLs without credentials whose host an entry names or contains.
 * Link-local addresses, cloud metadata addresses and names, and the unspecified addresses (`0.0.0.0`,
 * `::`) are reached only when an entry names them exactly, never through a range. Immutable.
 */
export class HttpTargetPolicy {
  /** The entries, normalised (addresses canonical, ranges masked to their network, names lowercase), for logs and docs. */
  readonly entries: readonly string[];

  private constructor(
    entries: readonly string[],
    private readonly addresses: ReadonlySet<string>,
    private readonly names: ReadonlySet<string>,
    private readonly ranges: readonly Range[],
  ) {
    this.entries = Object.freeze([...entries]);
  }

  /**
   * The policy of `entries`: IPv4/IPv6 literals (IPv6 with or without brackets), CIDR ranges (`10.0.0.0/8`,
   * `fd00::/8`; an IPv4-mapped range such as `::ffff:0:0/96` is taken as the IPv4 range it maps), or exact
   * host names (case-insensitive, trailing dot ignored). Throws ConfigError naming the first bad entry.
   */
  static of(entries: readonly string[]): HttpTargetPolicy {
    const addresses = new Set<string>();
    const names = new Set<string>();
    const ranges: Range[] = [];
    const normalised: string[] = [];
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase();
      if (entry.includes('/')) {
        const range = parseRange(entry, raw);
        ranges.push(range);
        normalised.push(`${formatIp(range.network)}/${range.prefix}`);
        continue;
      }
      const host = parseEntryHost(entry, raw);
      if (host.type === 'address') addresses.add(host.text);
      else names.add(host.text);
      normalised.push(host.text);
    }
    return new HttpTargetPolicy([...new Set(normalised)], addresses, names, ranges);
  }

  /**
   * Parses `url` with the WHATWG URL parser (so `127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1` are
   * `127.0.0.1`, and an IPv4-mapped IPv6 host such as `[::ffff:127.0.0.1]` is checked, and returned, as its
   * IPv4 address) and checks its scheme (`http:`/`https:`), that it carries no credentials, then its host.
   * Returns the normalised URL (a new object; `url` is not changed). Throws HttpTargetRefusedError with the
   * reason: `malformed`, `scheme`, `credentials`, `metadata`, `link-local` or `not-allowed`.
   */
  check(url: string | URL): URL {
    let parsed: URL;
    try {
      parsed = new URL(typeof url === 'string' ? url : url.href);
    } catch {
      const raw = String(url);
      throw new HttpTargetRefusedError(raw.slice(0, 100), 'malformed', 'not a URL');
    }
    const host = targetHost(parsed);
    if (host.type === 'address' && parsed.hostname !== host.text && host.address.length === 4) parsed.hostname = host.text;
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new HttpTargetRefusedError(host.text, 'scheme', `${parsed.protocol} is not http: or https:`);
    if (parsed.username !== '' || parsed.password !== '') throw new HttpTargetRefusedError(host.text, 'credentials', 'a URL with credentials');
    this.checkHost(host);
    return parsed;
  }

  private checkHost(host: Host): void {
    const exact = host.type === 'address' ? this.addresses.has(host.text) : this.names.has(host.text);
    if (exact) return;
    if (host.type === 'name') {
      if (METADATA_NAMES.has(host.text)) throw new HttpTargetRefusedError(host.text, 'metadata', 'a cloud metadata name is reached only when named exactly');
      throw new HttpTargetRefusedError(host.text, 'not-allowed', 'no entry of the allow list names it');
    }
    if (METADATA_ADDRESSES.has(host.text)) throw new HttpTargetRefusedError(host.text, 'metadata', 'a cloud metadata address is reached only when named exactly');
    if (LINK_LOCAL.some((r) => inRange(host.address, r.network, r.prefix))) {
      throw new HttpTargetRefusedError(host.text, 'link-local', 'a link-local address is reached only when named exactly');
    }
    if (UNSPECIFIED.has(host.text)) throw new HttpTargetRefusedError(host.text, 'not-allowed', 'the unspecified address is reached only when named exactly');
    if (this.ranges.some((r) => inRange(host.address, r.network, r.prefix))) return;
    throw new HttpTargetRefusedError(host.text, 'not-allowed', 'no entry of the allow list names or contains it');
  }
}

/** The host of a parsed target: a bracketed IPv6 or dotted IPv4 (the parser's forms) is an address, the rest a name. */
function targetHost(url: URL): Host {
  const hostname = url.hostname;
  const literal = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const bytes = parseIp(literal);
  if (bytes !== undefined) {
    const address = unmapped(bytes);
    return { type: 'address', address, text: formatIp(address) };
  }
  return { type: 'name', text: hostname.toLowerCase().replace(/\.$/, '') };
}

/** An entry without `/`: a literal (bracketed IPv6 too), or a name; a name the URL parser reads as an address (`127.1`) is that address. */
function parseEntryHost(entry: string, raw: string): Host {
  const literal = entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry;
  const bytes = parseIp(literal);
  if (bytes !== undefined) {
    const address = unmapped(bytes);
    return { type: 'address', address, text: formatIp(address) };
  }
  if (!NAME.test(entry)) throw new ConfigError(`http allow list: ${JSON.stringify(raw)} is not an IP address, a CIDR range or a host name`);
  let url: URL;
  try {
    url = new URL(`http://${entry}/`);
  } catch {
    throw new ConfigError(`http allow list: ${JSON.stringify(raw)} is not an IP address, a CIDR range or a host name`);
  }
  return targetHost(url);
}

/** A `network/prefix` entry: a plain IPv4 or IPv6 literal (brackets allowed) and a prefix length of its family. */
function parseRange(entry: string, raw: string): Range {
  const slash = entry.lastIndexOf('/');
  const base = entry.slice(0, slash);
  const literal = base.startsWith('[') && base.endsWith(']') ? base.slice(1, -1) : base;
  const bytes = parseIp(literal);
  const bits = entry.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (bytes === undefined || !(prefix <= bytes.length * 8)) {
    throw new ConfigError(`http allow list: ${JSON.stringify(raw)} is not a CIDR range (an IPv4 or IPv6 address, a slash and a prefix length of its family)`);
  }
  const mapped = unmapped(bytes);
  if (mapped !== bytes && prefix >= 96) return { network: masked(mapped, prefix - 96), prefix: prefix - 96 };
  return { network: masked(bytes, prefix), prefix };
}
