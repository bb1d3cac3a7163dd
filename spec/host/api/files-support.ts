/**
 * What the file route specs share: their urls, a raw byte client (node:http: bodies as Buffers, uploads
 * streamed or cut at will) and a wait on a directory's entries (a file watch, not a sleep).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, statSync, watch } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
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

/** Sends one request and reads its answer as bytes. */
export function raw(baseUrl: string, method: string, path: string, options: RawOptions = {}): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = { ...(options.token === null || options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }), ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(options.body.byteLength);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      const done = (complete: boolean): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete });
      res.once('end', () => done(res.complete));
      res.once('error', () => done(false));
      res.once('aborted', () => done(false));
    });
    req.once('error', reject);
    req.end(options.body);
  });
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
