/**
 * Small HTTP helpers for the host: routes of the direct transport, JSON answers, refusing an upgrade on
 * the raw socket, reading a bounded body. Nothing here logs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { isSafeId } from '../wire/safe-id';

/** `POST /cloud/environment/{id}/direct/register` (docs/protocol.md#registration). */
export const REGISTER_PATH = /^\/cloud\/environment\/([^/]+)\/direct\/register$/;
/** The WebSocket url the host hands out: `/cloud/environment/{id}/direct/connect/{registrationId}?token=...`. */
export const CONNECT_PATH = /^\/cloud\/environment\/([^/]+)\/direct\/connect\/(reg-[0-9a-f-]{36})$/;

const HOST_HEADER = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** The path and query of a request target, or `undefined` when it does not parse. */
export function parseTarget(raw: string | undefined): URL | undefined {
  if (raw === undefined || !raw.startsWith('/')) return undefined;
  try {
    return new URL(raw, 'http://host.invalid');
  } catch {
    return undefined;
  }
}

/** A percent-decoded environment id from a path segment, when it is a safe id (letters, digits, `._-`). */
export function decodeEnvironmentId(segment: string | undefined): string | undefined {
  if (segment === undefined) return undefined;
  try {
    const id = decodeURIComponent(segment);
    return isSafeId(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The request's Host header when it is a plain host[:port] (it is signed, so it is where the executor dialled). */
export function safeHostHeader(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  return host !== undefined && HOST_HEADER.test(host) ? host : undefined;
}

/** Writes a JSON answer and ends the response. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
}

/** Answers an upgrade request with a plain HTTP status on the raw socket, then closes it. */
export function refuseUpgrade(socket: Duplex, status: number, headers: Readonly<Record<string, string>> = {}): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: (STATUS_CODES[status] ?? 'error').toLowerCase() });
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, 'connection: close', 'content-type: application/json', `content-length: ${Buffer.byteLength(body)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}

/** Reads the whole body; `undefined` (and the rest discarded) when it exceeds `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size <= limit) chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(size <= limit ? Buffer.concat(chunks) : undefined));
    req.once('error', reject);
  });
}

/** Whether `host` (a bind address or a url hostname) is a loopback address or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/** `host:port` for a url, with brackets around an IPv6 address. */
export function hostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The url other replicas reach a host at, by default (`--internal-url` says otherwise): its own url, or,
 * bound to every address (`0.0.0.0`, `::`), the machine's first non-internal IPv4 address (else its
 * hostname) in its place.
 */
export function internalUrlOf(scheme: 'http' | 'https', host: string, port: number): string {
  if (host !== '0.0.0.0' && host !== '::') return `${scheme}://${hostPort(host, port)}`;
  const external = Object.values(networkInterfaces())
    .flatMap((addresses) => addresses ?? [])
    .find((address) => address.family === 'IPv4' && !address.internal);
  return `${scheme}://${hostPort(external?.address ?? hostname(), port)}`;
}
