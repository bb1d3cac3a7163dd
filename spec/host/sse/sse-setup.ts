/**
 * The setup every SSE spec shares: a real host with the operator API (one operator token) and a real
 * codex direct executor joined to it; processes started through the API (`POST .../processes`), with the
 * library's own ExecProcess beside each as the ground truth of what the host received.
 *
 * Import it before anything else in a spec: it imports `../../support/executor`, whose tracker stops the
 * executor and the host in an `afterAll`.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { firstValueFrom } from 'rxjs';
import { filter, map } from 'rxjs/operators';
import type { Environment, ExecProcess, ProcessEvent } from '../../../src';
import type { OperatorApiOptions } from '../../../src/host/api/operator-api';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import type { HostServer, HostServerOptions } from '../../../src/host/host-options';
import { startHostServer } from '../../../src/host/host-server';
import type { ProcessResource } from '../../../src/wire/operator-api';
import { startDirectExecutor, trackForCleanup } from '../../support/executor';
import type { SseEvent } from '../../support/sse-reader';

/** The environment processes get: just a PATH. */
export const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

const CREDENTIALS = { accessKeyId: 'AKIDSSESPEC', secretAccessKey: 'sse-spec-secret-not-real' };
/** A fixed operator token (tests only). */
const TOKEN = 'sse-spec-operator-token-0123456789';

/** A host with one joined executor. */
export interface SseHost {
  readonly host: HostServer;
  readonly environmentId: string;
  readonly environment: Environment;
  /** The operator token. */
  readonly token: string;
  /** `http://127.0.0.1:PORT` of the host. */
  readonly origin: string;
  /** The events path of a process (no query), for any origin. */
  eventsPath(processId: string): string;
  /** Starts `argv` (`sh -c` scripts mostly) through the API; resolves with the resource and the library's process. */
  start(argv: readonly string[], cwd?: string): Promise<{ readonly resource: ProcessResource; readonly process: ExecProcess }>;
  /** `GET path` on the API with the token: the status and the parsed JSON body. */
  getJson(path: string): Promise<{ readonly status: number; readonly body: unknown }>;
  /** The host's open event streams (`GET /api/v1/host`). */
  eventStreams(): Promise<number>;
}

/** Options of {@link startSseHost}. */
export interface SseHostOptions {
  readonly environmentId: string;
  readonly manager?: HostServerOptions['manager'];
  readonly operator?: Omit<OperatorApiOptions, 'tokens'>;
  /** Keep output in logs on disk (a temporary data dir of the spec's). */
  readonly outputLog?: HostServerOptions['outputLog'];
}

/** Starts the host and its executor; both are stopped by the spec file's tracker. */
export async function startSseHost(options: SseHostOptions): Promise<SseHost> {
  const host = trackForCleanup(
    await startHostServer({
      credentials: new Map([[CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey]]),
      ...(options.manager === undefined ? {} : { manager: options.manager }),
      ...(options.outputLog === undefined ? {} : { outputLog: options.outputLog }),
      // Specs open many requests in a burst; the rate limit is not what they test.
      operator: { requestsPerSecond: 1000, requestBurst: 2000, ...options.operator, tokens: new OperatorTokens([TOKEN]) },
    }),
  );
  const { environmentId } = options;
  await startDirectExecutor({ remoteUrl: host.url, environmentId, credentials: CREDENTIALS });
  const environment = await connected(host, environmentId);
  const call = (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => apiCall(host.url, method, path, body);
  return {
    host,
    environmentId,
    environment,
    token: TOKEN,
    origin: host.url,
    eventsPath: (processId) => `/api/v1/environments/${environmentId}/processes/${processId}/events`,
    start: async (argv, cwd = '/tmp') => {
      const { status, body } = await call('POST', `/api/v1/environments/${environmentId}/processes`, { argv, cwd, env: PATH_ENV });
      if (status !== 201) throw new Error(`start answered ${status}: ${JSON.stringify(body)}`);
      const resource = body as ProcessResource;
      const process = environment.getProcess(resource.id);
      if (process === undefined) throw new Error(`process ${resource.id} is not listed`);
      return { resource, process };
    },
    getJson: (path) => call('GET', path),
    eventStreams: async () => {
      const { body } = await call('GET', '/api/v1/host');
      return (body as { eventStreams: number }).eventStreams;
    },
  };
}

/** The environment once `id` is connected (again: waits for `connected` after a drop). */
export const connected = (host: HostServer, id: string): Promise<Environment> =>
  firstValueFrom(
    host.environments$.pipe(
      map((list) => list.find((e) => e.id === id && e.state === 'connected')?.environment),
      filter((e): e is Environment => e !== undefined),
    ),
  );

/** Resolves once `id` is in `state`. */
export const reached = (host: HostServer, id: string, state: string): Promise<unknown> =>
  firstValueFrom(host.environments$.pipe(filter((list) => list.some((e) => e.id === id && e.state === state))));

function apiCall(origin: string, method: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const req = request(`${origin}${path}`, { method, agent: false, headers });
    req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${path}: no answer in 15 s`)));
    req.once('error', reject);
    req.once('response', (res) => {
      const socket = res.socket;
      const parts: Buffer[] = [];
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      res.once('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        const answer = { status: res.statusCode ?? 0, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
        // Resolve once the socket is gone, so a spec never ends with it still closing.
        if (socket.closed) resolve(answer);
        else socket.once('close', () => resolve(answer));
      });
    });
    req.end(payload);
  });
}

/** One sequenced event as the reader decoded it. */
export interface DecodedEvent {
  readonly type: string;
  readonly seq: number | undefined;
  readonly stream?: string;
  readonly chunk?: Buffer;
  readonly data: Record<string, unknown>;
}

/** Decodes an SSE event of the process stream; checks that `id:` and the data's `seq` agree. */
export function decode(event: SseEvent): DecodedEvent {
  const data = JSON.parse(event.data) as Record<string, unknown>;
  const seq = typeof data['seq'] === 'number' ? data['seq'] : undefined;
  if (seq !== event.id) throw new Error(`event ${event.event}: id ${String(event.id)} but data seq ${String(seq)}`);
  if (event.event === 'output') {
    const chunk = Buffer.from(String(data['chunk']), 'base64');
    if (chunk.toString('base64') !== data['chunk']) throw new Error(`seq ${String(seq)}: chunk is not canonical base64`);
    return { type: 'output', seq, stream: String(data['stream']), chunk, data };
  }
  return { type: event.event, seq, data };
}

/** An event as one comparable line: `output:SEQ:STREAM:BASE64`, `exited:SEQ:CODE`, `closed:SEQ`, `truncated:NEXT`. */
export function lineOf(event: SseEvent): string {
  const data = JSON.parse(event.data) as Record<string, unknown>;
  const id = event.id === undefined ? '' : String(event.id);
  switch (event.event) {
    case 'output':
      return `output:${id}:${String(data['stream'])}:${String(data['chunk'])}`;
    case 'exited':
      return `exited:${id}:${String(data['exitCode'])}`;
    case 'closed':
      return `closed:${id}`;
    case 'truncated':
      return `truncated:${String(data['nextSeq'])}`;
    default:
      return `${event.event}:${event.data}`;
  }
}

/** What the library's process delivered, by seq (the ground truth the SSE streams are compared with). */
export class GroundTruth {
  readonly bySeq = new Map<number, ProcessEvent>();
  /** What should never happen: a gap, a marker or a failure in the library's own stream. */
  readonly problems: string[] = [];
  lastSeq = 0;
  /** Stdout bytes so far. */
  stdoutBytes = 0;
  readonly done: Promise<void>;
  private waiters: { readonly test: () => boolean; readonly resolve: () => void; readonly reject: (e: Error) => void }[] = [];

  constructor(process: ExecProcess) {
    this.done = new Promise<void>((resolve) =>
      process.events$.subscribe({
        next: (event) => {
          if (event.type === 'failed' || event.type === 'truncated') return void this.problems.push(`ground truth saw ${event.type}`);
          if (event.seq !== this.lastSeq + 1) this.problems.push(`ground truth: seq ${event.seq} after ${this.lastSeq}`);
          this.bySeq.set(event.seq, event);
          this.lastSeq = event.seq;
          if (event.type === 'output' && event.stream === 'stdout') this.stdoutBytes += event.chunk.byteLength;
          this.check();
        },
        complete: () => {
          this.check();
          for (const waiter of this.waiters.splice(0)) waiter.reject(new Error('the process ended first'));
          resolve();
        },
      }),
    );
  }

  /** Resolves once `test()` holds (checked at each event); rejects if the process ends first. */
  when(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => this.waiters.push({ test, resolve, reject }));
  }

  /** The stdout text so far. */
  stdoutText(): string {
    return this.stdout().toString('utf8');
  }

  /** One stream's text so far. */
  text(stream: 'stdout' | 'stderr'): string {
    const parts: Uint8Array[] = [];
    for (const event of this.bySeq.values()) if (event.type === 'output' && event.stream === stream) parts.push(event.chunk);
    return Buffer.concat(parts).toString('utf8');
  }

  private check(): void {
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.test()) return true;
      waiter.resolve();
      return false;
    });
  }

  /** The events after `after` as {@link lineOf} gives them. */
  linesAfter(after: number): string[] {
    const lines: string[] = [];
    for (let seq = after + 1; seq <= this.lastSeq; seq += 1) {
      const event = this.bySeq.get(seq);
      if (event?.type === 'output') lines.push(`output:${seq}:${event.stream}:${Buffer.from(event.chunk).toString('base64')}`);
      else if (event?.type === 'exited') lines.push(`exited:${seq}:${event.exitCode}`);
      else if (event?.type === 'closed') lines.push(`closed:${seq}`);
      else lines.push(`missing:${seq}`);
    }
    return lines;
  }

  /** The stdout bytes of seqs in (after, upTo]. */
  stdout(after = 0, upTo = this.lastSeq): Buffer {
    const parts: Uint8Array[] = [];
    for (let seq = after + 1; seq <= upTo; seq += 1) {
      const event = this.bySeq.get(seq);
      if (event?.type === 'output' && event.stream === 'stdout') parts.push(event.chunk);
    }
    return Buffer.concat(parts);
  }

  /** The seq whose output holds stdout byte `offset` (0-based). */
  seqAtStdoutOffset(offset: number): number {
    let seen = 0;
    for (let seq = 1; seq <= this.lastSeq; seq += 1) {
      const event = this.bySeq.get(seq);
      if (event?.type !== 'output' || event.stream !== 'stdout') continue;
      seen += event.chunk.byteLength;
      if (seen > offset) return seq;
    }
    return this.lastSeq;
  }
}

/** sha256 hex of bytes. */
export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Resolves once the host holds at least `count` open event streams (asked again after each answer); rejects after 10 s. */
export async function waitForStreams(setup: SseHost, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await setup.eventStreams()) < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} event streams after 10 s`);
  }
}

/** `promise`, or a rejection naming `what` after `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} in ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
