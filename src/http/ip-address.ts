/** IP addresses as bytes for {@link HttpTargetPolicy}: parsing the literal forms, canonical text, CIDR containment. */
import { isIPv4, isIPv6 } from 'node:net';

/** An IPv4 (4 bytes) or IPv6 (16 bytes) address. */
export type IpBytes = Uint8Array;

/**
 * The bytes of a literal in its plain form: dotted-decimal IPv4 (no leading zeros, as `node:net` takes
 * it) or IPv6 without brackets and without a zone. `undefined` for anything else. The alternative IPv4
 * forms (`127.1`, `0x7f000001`) are the WHATWG URL parser's to normalise, before this.
 */
export function parseIp(text: string): IpBytes | undefined {
  if (isIPv4(text)) return Uint8Array.from(text.split('.').map(Number));
  if (isIPv6(text) && !text.includes('%')) return parseIpv6(text);
  return undefined;
}

function parseIpv6(text: string): IpBytes {
  // A dotted tail (`::ffff:1.2.3.4`) becomes its two hex groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  let hex = text;
  if (tail.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    hex = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left = '', right] = hex.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const head = groups(left);
  const rest = right === undefined ? [] : groups(right);
  const all = [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  return bytes;
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) stands for; the address itself otherwise. */
export function unmapped(address: IpBytes): IpBytes {
  if (address.length !== 16) return address;
  for (let i = 0; i < 10; i += 1) if (address[i] !== 0) return address;
  return address[10] === 0xff && address[11] === 0xff ? address.slice(12) : address;
}

/** The canonical text: dotted-decimal IPv4, compressed lowercase IPv6 without brackets (as the URL parser writes it). */
export function formatIp(address: IpBytes): string {
  if (address.length === 4) return address.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((address[i] ?? 0) << 8) | (address[i + 1] ?? 0)).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

/** The address with every bit after the first `prefix` cleared (a CIDR's network address). */
export function masked(address: IpBytes, prefix: number): IpBytes {
  return address.map((byte, i) => {
    const bits = Math.min(8, Math.max(0, prefix - i * 8));
    return byte & ((0xff << (8 - bits)) & 0xff);
  });
}

/** Whether `address` is in the range `network`/`prefix` (both of the same family; another family: false). */
export function inRange(address: IpBytes, network: IpBytes, prefix: number): boolean {
  if (address.length !== network.length) return false;
  const net = masked(network, prefix);
  return masked(address, prefix).every((byte, i) => byte === net[i]);
}
