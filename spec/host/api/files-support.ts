/**
 * What the file route specs share: their urls, a raw byte client (node:http: bodies as Buffers, uploads
 * streamed or cut at will) and a wait on a directory's entries (a file watch, not a sleep).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, statSync, watch } from 'node:fs';
import type { ClientRequest, IncomingHttpHeaders } from 'node:http';
import { request } from 'node:http';
import { join } from 'node:path';
import { API_PREFIX } from '../../../src/wire/operator-api';

/** A file route's url: `sub` under `…/files`, with the query `query`. */
export function filesUrl(environmentId: string, sub: string, query: Readonly<Record<string, string>> = {}): string {
  const search = new URLSearchParams(query).toString();
  return `${API_PREFIX}/environments/${environmentId}/files${sub}${search === '' ? '' : `?${search}`}`;
}

/** A whole answer, its body as bytes. */
export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** Whether the answer ended cleanly (false: the connection was cut mid-body). */
  readonly complete: boolean;
}

/** How to send a raw request. */
export interface RawOptions {
  readonly token?: string | null;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Buffer;
}

/** A request on its way: its body is the caller's to write and end; `answer` is its answer as bytes. */
export interface OpenRequest {
  readonly req: ClientRequest;
  /** Resolves with the answer (`complete` false when it was cut mid-body); rejects with the request's error. */
  readonly answer: Promise<RawResponse>;
}

/** Opens one request (`headers` as given, the token's `Authorization` first) without writing its body. */
export function openRequest(baseUrl: string, method: string, path: string, options: Omit<RawOptions, 'body'> = {}): OpenRequest {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = { ...(options.token === null || options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }), ...options.headers };
  let req: ClientRequest | undefined;
  const answer = new Promise<RawResponse>((resolve, reject) => {
    req = request({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      const done = (complete: boolean): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete });
      res.once('end', () => done(res.complete));
      res.once('error', () => done(false));
      res.once('aborted', () => done(false));
    });
    req.once('error', reject);
  });
  if (req === undefined) throw new Error('no request');
  return { req, answer };
}

/** Sends one request and reads its answer as bytes. */
export function raw(baseUrl: string, method: string, path: string, options: RawOptions = {}): Promise<RawResponse> {
  const headers = { ...options.headers, ...(options.body === undefined ? {} : { 'content-length': String(options.body.byteLength) }) };
  const { req, answer } = openRequest(baseUrl, method, path, { ...options, headers });
  req.end(options.body);
  return answer;
}

/** A PUT of `total` bytes to `path` with `token`, of which `first` are sent: the test sends (or withholds) the rest. */
export function startUpload(baseUrl: string, path: string, token: string, total: number, first: Buffer): OpenRequest {
  const open = openRequest(baseUrl, 'PUT', path, { token, headers: { 'content-length': String(total) } });
  open.req.write(first);
  return open;
}

/** The hex SHA-256 of `bytes`. */
export const sha256 = (bytes: Buffer | Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** `size` random bytes. */
export const bytesOf = (size: number): Buffer => randomBytes(size);

/** The names in `dir` now. */
export const namesIn = (dir: string): string[] => readdirSync(dir);

/** Resolves with the first name in `dir` for which `holds(name, size)` is true: a file watch, not a sleep. */
export function waitForEntry(dir: string, holds: (name: string, size: number) => boolean, timeoutMs = 20_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = (): string | undefined =>
      readdirSync(dir).find((name) => {
        try {
          return holds(name, statSync(join(dir, name)).size);
        } catch {
          return false;
        }
      });
    const watcher = watch(dir, () => {
      const found = check();
      if (found !== undefined) done(found);
    });
    const timer = setTimeout(() => done(undefined, new Error(`no entry of ${dir} held within ${timeoutMs} ms`)), timeoutMs);
    function done(found: string | undefined, error?: Error): void {
      watcher.close();
      clearTimeout(timer);
      if (found !== undefined) resolve(found);
      else reject(error ?? new Error('not found'));
    }
    const now = check();
    if (now !== undefined) done(now);
  });
}
