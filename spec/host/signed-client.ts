/**
 * A scripted executor for host specs: SigV4-signed registration and upgrade requests made with `aws4` (as
 * the real executor signs them, docs/protocol.md#sigv4-signing), with knobs to get them wrong on purpose.
 */
import { request } from 'node:http';
import { request as tlsRequest } from 'node:https';
import { sign } from 'aws4';
import WebSocket from 'ws';

/** Credentials a spec signs with. */
export interface SpecCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** Ways to sign. */
export interface SignOptions {
  /** Sign as of this time instead of now (a stale signature). */
  readonly signedAt?: Date;
  /** Send no Authorization header at all. */
  readonly unsigned?: boolean;
  /** @default 'us-east-1' */
  readonly region?: string;
  /** Trusted CA (PEM) for an https host. */
  readonly ca?: string;
}

/** The registration document the host answers with. */
export interface Registration {
  readonly environment_id: string;
  readonly transport: string;
  readonly registration_id: string;
  readonly url: string;
}

const amzDate = (date: Date): string => date.toISOString().replace(/[:-]|\.\d{3}/g, '');

/** Signed headers for `method url` (aws4 adds Host and X-Amz-Date). */
export function signedHeaders(method: string, url: string, credentials: SpecCredentials, body: string | undefined, options: SignOptions = {}): Record<string, string> {
  const parsed = new URL(url);
  const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  if (options.signedAt !== undefined) headers['X-Amz-Date'] = amzDate(options.signedAt);
  const signed = sign(
    { host: parsed.host, path: `${parsed.pathname}${parsed.search}`, method, headers, service: 'execute-api', region: options.region ?? 'us-east-1', ...(body === undefined ? {} : { body }) },
    credentials,
  );
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers ?? {})) if (value !== undefined) out[name.toLowerCase()] = String(value);
  if (options.unsigned === true) delete out['authorization'];
  return out;
}

/** POSTs a registration for `environmentId`; resolves with the status and the parsed body. */
export function register(baseUrl: string, environmentId: string, credentials: SpecCredentials, options: SignOptions = {}): Promise<{ status: number; body: unknown }> {
  const url = `${baseUrl}/cloud/environment/${encodeURIComponent(environmentId)}/direct/register`;
  const body = JSON.stringify({ transport: 'direct_jsonrpc_v1' });
  const headers = signedHeaders('POST', url, credentials, body, options);
  return new Promise((resolve, reject) => {
    const send = url.startsWith('https:') ? tlsRequest : request;
    const req = send(url, { method: 'POST', headers, agent: false, ...(options.ca === undefined ? {} : { ca: options.ca }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Registers and expects 200. */
export async function registerOk(baseUrl: string, environmentId: string, credentials: SpecCredentials): Promise<Registration> {
  const { status, body } = await register(baseUrl, environmentId, credentials);
  if (status !== 200) throw new Error(`registration answered ${status}`);
  return body as Registration;
}

/**
 * The outcome of an upgrade: the HTTP status it was refused with, or the open socket and its first
 * message (listened for from the start: it may arrive in the same packet as the 101).
 */
export type UpgradeOutcome = { readonly status: number } | { readonly socket: WebSocket; readonly firstMessage: Promise<string> };

/** Dials `url` with a signed upgrade. The caller closes a returned socket. */
export function upgrade(url: string, credentials: SpecCredentials, options: SignOptions = {}): Promise<UpgradeOutcome> {
  const headers = signedHeaders('GET', url.replace(/^ws/, 'http'), credentials, undefined, options);
  delete headers['host'];
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, perMessageDeflate: false });
    const firstMessage = new Promise<string>((resolveMessage) => socket.once('message', (data) => resolveMessage(String(data))));
    socket.once('open', () => resolve({ socket, firstMessage }));
    socket.once('unexpected-response', (req, res) => {
      resolve({ status: res.statusCode ?? 0 });
      res.resume();
      req.destroy();
    });
    socket.once('error', reject);
  });
}
