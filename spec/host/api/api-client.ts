/**
 * A small client of the operator API for specs, on `node:http` (not fetch: paths go out exactly as
 * written, so `..` and `%2e%2e` reach the server; bodies can be chunked or declare a length they never
 * send). One connection per request (`agent: false`), so nothing stays open after a spec. Event streams
 * are read frame by frame as they arrive.
 */
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request } from 'node:http';
import { API_PREFIX } from '../../../src/wire/operator-api';
import type { EventStream } from './sse-reader';
import { eventStream, within } from './sse-reader';

export type { EventStream, SseEvent } from './sse-reader';
export { within } from './sse-reader';

/** A whole answer. `body` is the parsed JSON when the text parses, the text otherwise. */
export interface ApiResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly body: unknown;
}

/** How to send one request. */
export interface RequestOptions {
  /** `Authorization: Bearer <token>`; `null` sends no Authorization (the client's token otherwise). */
  readonly token?: string | null;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as `application/json` (unless `headers` names another content type). */
  readonly json?: unknown;
  /** Sent as it is (with `headers`' content type, if any). */
  readonly body?: string | Buffer;
  /** Send the body with `Transfer-Encoding: chunked` (no content-length). */
  readonly chunked?: boolean;
}

/** What opening an event stream gave: the stream, or the refusal as a whole answer. */
export type EventsOpened = { readonly stream: EventStream } | { readonly refused: ApiResponse };

const DEFAULT_WAIT_MS = 20_000;

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function readAll(res: IncomingMessage): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.once('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parseBody(text) });
    });
    res.once('error', reject);
  });
}

/** The operator API of one host, as one token (or none). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null,
  ) {}

  /** The same host as another token (`null`: none). */
  as(token: string | null): ApiClient {
    return new ApiClient(this.baseUrl, token);
  }

  /** Sends one request and reads the whole answer. */
  request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    return within(
      new Promise<ApiResponse>((resolve, reject) => {
        const req = this.send(method, path, options);
        let answered = false;
        req.once('response', (res) => {
          answered = true;
          readAll(res).then(resolve, reject);
        });
        // A server that answers before it read the body may close while we still send it.
        req.on('error', (error) => {
          if (!answered) reject(error);
        });
        this.writeBody(req, options);
      }),
      DEFAULT_WAIT_MS,
      `${method} ${path}`,
    );
  }

  get(path: string, options?: RequestOptions): Promise<ApiResponse> {
    return this.request('GET', path, options);
  }

  post(path: string, json?: unknown, options: RequestOptions = {}): Promise<ApiResponse> {
    return this.request('POST', path, json === undefined ? options : { ...options, json });
  }

  delete(path: string, options?: RequestOptions): Promise<ApiResponse> {
    return this.request('DELETE', path, options);
  }

  /**
   * Sends headers declaring `declaredBytes` (content-length) or a chunked body, then streams body
   * bytes until the server answers (at most `maxBytes`); resolves with the answer, without ever
   * finishing the body when the server refused it early.
   */
  refusedUpload(path: string, how: { readonly declaredBytes?: number; readonly maxBytes: number }): Promise<ApiResponse> {
    return within(
      new Promise<ApiResponse>((resolve, reject) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (how.declaredBytes !== undefined) headers['content-length'] = String(how.declaredBytes);
        const req = this.send('POST', path, { headers, chunked: how.declaredBytes === undefined });
        let answered = false;
        req.once('response', (res) => {
          answered = true;
          readAll(res).then((answer) => {
            req.destroy();
            resolve(answer);
          }, reject);
        });
        req.on('error', (error) => {
          if (!answered) reject(error);
        });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const pump = (): void => {
          while (!answered && sent + chunk.byteLength <= how.maxBytes) {
            sent += chunk.byteLength;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
        };
        req.write('{"argv":["');
        pump();
      }),
      DEFAULT_WAIT_MS,
      `refused upload to ${path}`,
    );
  }

  /** Opens an event stream; a refusal (any status but 200) is read whole. */
  events(path: string, options: RequestOptions = {}): Promise<EventsOpened> {
    return within(
      new Promise<EventsOpened>((resolve, reject) => {
        const req = this.send('GET', path, { ...options, headers: { accept: 'text/event-stream', ...options.headers } });
        req.once('response', (res) => {
          if (res.statusCode === 200) resolve({ stream: eventStream(req, res) });
          else readAll(res).then((refused) => resolve({ refused }), reject);
        });
        req.once('error', reject);
        req.end();
      }),
      DEFAULT_WAIT_MS,
      `GET ${path} (events)`,
    );
  }

  private send(method: string, path: string, options: RequestOptions): ClientRequest {
    const url = new URL(this.baseUrl);
    const token = options.token === undefined ? this.token : options.token;
    const headers: Record<string, string> = { ...(token === null ? {} : { authorization: `Bearer ${token}` }) };
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    Object.assign(headers, options.headers);
    const body = bodyOf(options);
    if (body !== undefined && options.chunked !== true) headers['content-length'] = String(body.byteLength);
    return request({ host: url.hostname, port: url.port, method, path, headers, agent: false });
  }

  private writeBody(req: ClientRequest, options: RequestOptions): void {
    const body = bodyOf(options);
    if (body === undefined) return void req.end();
    if (options.chunked !== true) return void req.end(body);
    // Two chunks at least, so it really goes chunked.
    const half = body.byteLength >> 1;
    req.write(body.subarray(0, half));
    req.end(body.subarray(half));
  }
}

function bodyOf(options: RequestOptions): Buffer | undefined {
  if (options.body !== undefined) return Buffer.from(options.body);
  if (options.json !== undefined) return Buffer.from(JSON.stringify(options.json));
  return undefined;
}

/** The API's paths. */
export const paths = {
  openapi: `${API_PREFIX}/openapi.json`,
  host: `${API_PREFIX}/host`,
  environments: `${API_PREFIX}/environments`,
  overview: `${API_PREFIX}/overview`,
  environment: (environmentId: string): string => `${API_PREFIX}/environments/${environmentId}`,
  processes: (environmentId: string): string => `${API_PREFIX}/environments/${environmentId}/processes`,
  process: (environmentId: string, processId: string): string => `${API_PREFIX}/environments/${environmentId}/processes/${processId}`,
  events: (environmentId: string, processId: string): string => `${API_PREFIX}/environments/${environmentId}/processes/${processId}/events`,
  stdin: (environmentId: string, processId: string): string => `${API_PREFIX}/environments/${environmentId}/processes/${processId}/stdin`,
  stdinEnd: (environmentId: string, processId: string): string => `${API_PREFIX}/environments/${environmentId}/processes/${processId}/stdin/end`,
  interrupt: (environmentId: string, processId: string): string => `${API_PREFIX}/environments/${environmentId}/processes/${processId}/interrupt`,
  terminate: (environmentId: string, processId: string): string => `${API_PREFIX}/environments/${environmentId}/processes/${processId}/terminate`,
};
