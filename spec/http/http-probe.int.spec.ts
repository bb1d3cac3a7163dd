/**
 * `http/request` on the real 0.171.0 executor (issue 42's probe, docs/protocol.md#http-requests): what bounds a
 * request, what the executor does to headers and bodies, how large its deltas and messages get, and whether a
 * request waiting for its head holds the connection's request line. The targets are node HTTP servers on
 * 127.0.0.1 in this process; every wait is on an event, bounded by {@link within}.
 */
import '../support/executor';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';
import { firstValueFrom } from 'rxjs';
import { filter, take } from 'rxjs/operators';
import type { Environment, ExecHttpClient, HttpEvent } from '../../src';
import { EnvironmentManager, FrameTooLargeError, HttpBodyError, RpcError } from '../../src';
import { startListeningExecutor, trackForCleanup } from '../support/executor';
import { listenOnLoopback } from '../support/listen-on-loopback';
import { dialOpen, initialize } from '../harness/raw-peer';

const MiB = 1024 * 1024;
const PATH_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/** Rejects with `what` unless `promise` settles within `ms` (a bound, never a wait for an event). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

/** The settled value or the rejection reason, and when (Date.now()) it settled. */
const settled = <T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown; at: number }> =>
  promise.then(
    (value) => ({ value, at: Date.now() }),
    (error: unknown) => ({ error, at: Date.now() }),
  );

/** A deferred promise. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** One request as the target saw it. */
interface Seen {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Resolves with the body's length once the request body ended. */
  readonly bodyBytes: Promise<number>;
  /** Resolves when the target's socket of this request closed. */
  readonly socketClosed: Promise<void>;
  readonly isSocketClosed: () => boolean;
}

type Handler = (seen: Seen) => void;

/** An HTTP target on 127.0.0.1: a handler per path (registered before the request), each arrival awaitable. */
interface Target {
  readonly base: string;
  route(path: string, handler: Handler): void;
  /** Resolves with the first request for `path` (already arrived or future). */
  arrival(path: string): Promise<Seen>;
}

async function startTarget(): Promise<Target> {
  const handlers = new Map<string, Handler>();
  const arrivals = new Map<string, ReturnType<typeof deferred<Seen>>>();
  const arrivalOf = (path: string): ReturnType<typeof deferred<Seen>> => {
    const known = arrivals.get(path) ?? deferred<Seen>();
    arrivals.set(path, known);
    return known;
  };
  const server = createServer((req, res) => {
    const path = req.url ?? '';
    let closed = false;
    const socketClosed = new Promise<void>((resolve) =>
      req.socket.once('close', () => {
        closed = true;
        resolve();
      }),
    );
    const bodyBytes = new Promise<number>((resolve) => {
      let length = 0;
      req.on('data', (chunk: Buffer) => (length += chunk.length));
      req.on('end', () => resolve(length));
    });
    const seen: Seen = { req, res, bodyBytes, socketClosed, isSocketClosed: () => closed };
    const handler = handlers.get(path);
    if (handler === undefined) res.writeHead(404).end();
    else handler(seen);
    arrivalOf(path).resolve(seen);
  });
  const port = await listenOnLoopback(server, 'the HTTP target');
  trackForCleanup({
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return {
    base: `http://127.0.0.1:${port}`,
    route: (path, handler) => handlers.set(path, handler),
    arrival: (path) => arrivalOf(path).promise,
  };
}

/** Writes `data: <n>` every `everyMs` until the socket closes. */
const trickle =
  (everyMs: number): Handler =>
  ({ res, socketClosed }) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let n = 0;
    const timer = setInterval(() => res.write(`data: ${n++}\n\n`), everyMs);
    void socketClosed.then(() => clearInterval(timer));
  };

const headerOf = (headers: readonly { name: string; value: string }[], name: string): string | undefined =>
  headers.find((header) => header.name.toLowerCase() === name)?.value;

const bodyChunks = (events: readonly HttpEvent[]): Buffer[] => events.flatMap((event) => (event.type === 'body' ? [event.chunk] : []));

/** Streams `url`, collecting the events until the stream ends; resolves with them and how it ended. */
async function streamAll(http: ExecHttpClient, url: string, extra: { timeoutMs?: number; requestId?: string } = {}, onEvent: (event: HttpEvent) => void = () => undefined) {
  const events: HttpEvent[] = [];
  const ended = await settled(
    new Promise<void>((resolve, reject) =>
      http.stream({ method: 'GET', url, ...extra }).subscribe({
        next: (event) => {
          events.push(event);
          onEvent(event);
        },
        error: reject,
        complete: resolve,
      }),
    ),
  );
  return { events, ended };
}

describe('http/request on the real executor', () => {
  let target: Target;
  let executorUrl: string;
  let manager: EnvironmentManager;
  let environment: Environment;
  let http: ExecHttpClient;

  const connect = async (id: string, url: string): Promise<{ manager: EnvironmentManager; environment: Environment }> => {
    const made = await EnvironmentManager.connect(id, url, { clientName: 'exec-rx-spec' });
    const env = made.defaultEnvironment();
    if (env === undefined) throw new Error('no default environment');
    return { manager: made, environment: env };
  };

  beforeAll(async () => {
    target = await startTarget();
    const executor = await startListeningExecutor();
    executorUrl = executor.url ?? '';
    ({ manager, environment } = await connect('http-probe', executorUrl));
    http = environment.getHttpClient();
  });
  afterAll(async () => {
    await manager.close({ terminateProcesses: true });
  });

  it('timeoutMs cuts a streamed body: the stream errors with "error decoding response body" after pieces arrived', async () => {
    target.route('/trickle', trickle(200));
    const started = Date.now();
    const { events, ended } = await within(streamAll(http, `${target.base}/trickle`, { timeoutMs: 1000 }), 10_000, 'the trickle to end');
    expect(events[0]).toMatchObject({ type: 'head', status: 200 });
    expect(bodyChunks(events).length).toBeGreaterThanOrEqual(2);
    expect(ended.error).toBeInstanceOf(HttpBodyError);
    expect(ended.error).toMatchObject({ bodyError: 'error decoding response body' });
    expect(ended.at - started).toBeGreaterThanOrEqual(950);
    expect(ended.at - started).toBeLessThan(3000);
  });

  it('a target that never answers: -32603 "http/request failed: error sending request" at timeoutMs, and the target sees its socket closed', async () => {
    target.route('/never', () => undefined);
    const started = Date.now();
    const outcome = await within(settled(http.request({ method: 'GET', url: `${target.base}/never`, timeoutMs: 1500 })), 10_000, 'the hanging request');
    expect(outcome.error).toBeInstanceOf(RpcError);
    expect(outcome.error).toMatchObject({ rpcCode: -32603, rpcMessage: expect.stringMatching(/^http\/request failed: error sending request/) });
    expect(outcome.at - started).toBeGreaterThanOrEqual(1400);
    const seen = await target.arrival('/never');
    await within(seen.socketClosed, 5000, 'the target to see its socket closed');
  });

  it('decompresses gzip, drops content-encoding and content-length, and sends accept */* and accept-encoding zstd,gzip', async () => {
    const text = 'hello gzip world '.repeat(100);
    const packed = gzipSync(Buffer.from(text));
    target.route('/gzip', ({ res }) => res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': packed.length, 'content-type': 'text/plain' }).end(packed));
    const response = await http.request({ method: 'GET', url: `${target.base}/gzip` });
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe(text);
    expect(headerOf(response.headers, 'content-encoding')).toBeUndefined();
    expect(headerOf(response.headers, 'content-length')).toBeUndefined();
    expect(headerOf(response.headers, 'content-type')).toBe('text/plain');
    const seen = await target.arrival('/gzip');
    expect({ accept: seen.req.headers.accept, acceptEncoding: seen.req.headers['accept-encoding'] }).toEqual({ accept: '*/*', acceptEncoding: 'zstd,gzip' });
  });

  it('passes headers verbatim: Host as given, connection and upgrade too; the head carries the target\'s connection header', async () => {
    target.route('/headers', ({ res }) => res.writeHead(200, { connection: 'keep-alive', 'keep-alive': 'timeout=5' }).end('ok'));
    const headers = [
      { name: 'host', value: 'evil.example' },
      { name: 'connection', value: 'close' },
      { name: 'upgrade', value: 'websocket' },
    ];
    const response = await http.request({ method: 'GET', url: `${target.base}/headers`, headers });
    expect(response.status).toBe(200);
    const seen = await target.arrival('/headers');
    expect({ host: seen.req.headers.host, connection: seen.req.headers.connection, upgrade: seen.req.headers.upgrade }).toEqual({
      host: 'evil.example',
      connection: 'close',
      upgrade: 'websocket',
    });
    expect(headerOf(response.headers, 'connection')).toBeDefined();
  });

  it('keeps reading a body nobody reads until the connection closes, then the target sees its socket closed', async () => {
    const own = await connect('http-probe-unread', executorUrl);
    try {
      // The target writes 64 KiB pieces as fast as the executor reads them, counting what left it.
      let flushed = 0;
      let goal = Infinity;
      const reached = deferred<void>();
      target.route('/flood', ({ res, isSocketClosed }) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const piece = Buffer.alloc(64 * 1024, 120);
        const pump = (): void => {
          while (!isSocketClosed()) {
            const more = res.write(piece, () => {
              flushed += piece.length;
              if (flushed >= goal) reached.resolve();
            });
            if (!more) return void res.once('drain', pump);
          }
        };
        pump();
      });
      const rpc = own.environment.client.liveRpc();
      if (rpc === undefined) throw new Error('not connected');
      let deltasAfter = 0;
      let unsubscribed = false;
      const counting = rpc.notifications('http/request/bodyDelta').subscribe((delta) => {
        if (unsubscribed && delta.requestId === 'probe-flood') deltasAfter += 1;
      });
      try {
        const stream = own.environment.getHttpClient().stream({ method: 'GET', url: `${target.base}/flood`, requestId: 'probe-flood' });
        // take(1) of the first body piece unsubscribes the stream.
        await within(firstValueFrom(stream.pipe(filter((event) => event.type === 'body'), take(1))), 10_000, 'the first body piece');
        unsubscribed = true;
        // 32 MiB more than left the target when we stopped listening: more than any socket buffers hold.
        goal = flushed + 32 * MiB;
        await within(reached.promise, 20_000, 'the target to write 32 MiB more');
        const seen = await target.arrival('/flood');
        expect(seen.isSocketClosed()).toBe(false);
        expect(deltasAfter).toBeGreaterThan(0);
      } finally {
        counting.unsubscribe();
      }
      await own.manager.close();
      const seen = await target.arrival('/flood');
      await within(seen.socketClosed, 5000, 'the target to see its socket closed');
    } finally {
      await own.manager.close();
    }
  });

  it('streams a 10 MiB body in deltas of at most 1 MiB, takes a request body of 12,478,054 bytes, and drops a connection sending over 16 MiB', async () => {
    const big = Buffer.alloc(10 * MiB, 97);
    target.route('/big', ({ res }) => res.writeHead(200, { 'content-length': big.length }).end(big));
    const { events, ended } = await within(streamAll(http, `${target.base}/big`), 20_000, 'the 10 MiB body');
    expect(ended.error).toBeUndefined();
    const sizes = bodyChunks(events).map((chunk) => chunk.length);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(big.length);
    const largest = Math.max(...sizes);
    expect(largest).toBeLessThanOrEqual(MiB);
    console.info(`http-probe: 10 MiB in ${sizes.length} deltas, the largest ${largest} bytes`);

    target.route('/upload', ({ res, bodyBytes }) => void bodyBytes.then((length) => res.writeHead(200).end(`len=${length}`)));
    const uploaded = await http.request({ method: 'POST', url: `${target.base}/upload`, body: Buffer.alloc(12_478_054, 98) });
    expect(uploaded.body.toString()).toBe('len=12478054');

    // 12.6 MiB is over 16 MiB as base64: the library refuses it, nothing sent…
    const tooBig = Buffer.alloc(Math.ceil(12.6 * MiB), 98);
    const refused = await settled(http.request({ method: 'POST', url: `${target.base}/upload-too-big`, body: tooBig }));
    expect(refused.error).toBeInstanceOf(FrameTooLargeError);
    // …and sent raw, the executor drops the connection without a word.
    const raw = await dialOpen(executorUrl);
    try {
      await initialize(raw.peer);
      raw.socket.send(JSON.stringify({ id: 99, method: 'http/request', params: { method: 'POST', url: `${target.base}/upload-too-big`, requestId: 'r', bodyBase64: tooBig.toString('base64') } }));
      expect(await within(raw.closed, 10_000, 'the executor to drop the raw connection')).toBe(1006);
    } finally {
      await raw.close();
    }
    expect(await manager.getEnvironmentStatus('http-probe')).toEqual({ status: 'ready' });
  });

  it('ignores a sandbox field: the raw call answers 200 from the loopback target', async () => {
    target.route('/sandboxed', ({ res }) => res.writeHead(200).end('reached'));
    const raw = await dialOpen(executorUrl);
    try {
      await initialize(raw.peer);
      // A sandbox that would cut the network, were it read.
      const sandbox = { permissions: { type: 'managed', file_system: { type: 'restricted', entries: [] }, network: 'restricted' }, cwd: '/tmp' };
      const result = await raw.peer.call('http/request', { method: 'GET', url: `${target.base}/sandboxed`, requestId: 'sb', sandbox });
      expect(result).toMatchObject({ status: 200, bodyBase64: Buffer.from('reached').toString('base64') });
    } finally {
      await raw.close();
    }
  });

  it('at --concurrent-requests 1 a request waiting for its head holds environment/status until timeoutMs', async () => {
    target.route('/hold-1', () => undefined);
    const hang = settled(http.request({ method: 'GET', url: `${target.base}/hold-1`, timeoutMs: 1500 }));
    await within(target.arrival('/hold-1'), 5000, 'the held request to arrive');
    const asked = Date.now();
    const status = await within(settled(manager.getEnvironmentStatus('http-probe')), 10_000, 'environment/status');
    const ended = await hang;
    expect(status.value).toEqual({ status: 'ready' });
    expect(ended.error).toBeInstanceOf(RpcError);
    expect(status.at).toBeGreaterThanOrEqual(ended.at);
    expect(status.at - asked).toBeGreaterThanOrEqual(1300);
  });

  it('once a streamed head arrived the line is free, even at --concurrent-requests 1', async () => {
    const release = deferred<void>();
    target.route('/slow-body', ({ res }) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first');
      void release.promise.then(() => res.end('last'));
    });
    const headSeen = deferred<void>();
    const streamed = streamAll(http, `${target.base}/slow-body`, {}, (event) => event.type === 'head' && headSeen.resolve());
    try {
      await within(headSeen.promise, 5000, 'the streamed head');
      const asked = Date.now();
      const status = await within(settled(manager.getEnvironmentStatus('http-probe')), 5000, 'environment/status');
      expect(status.value).toEqual({ status: 'ready' });
      expect(status.at - asked).toBeLessThan(1000);
    } finally {
      release.resolve();
    }
    const { events, ended } = await within(streamed, 5000, 'the stream to end');
    expect(ended.error).toBeUndefined();
    expect(Buffer.concat(bodyChunks(events)).toString()).toBe('firstlast');
  });

  it('redirectPolicy stop returns the 302 with its Location; the default follows it', async () => {
    target.route('/moved', ({ res }) => res.writeHead(302, { location: '/moved-here' }).end());
    target.route('/moved-here', ({ res }) => res.writeHead(200).end('here'));
    const stopped = await http.request({ method: 'GET', url: `${target.base}/moved`, redirectPolicy: 'stop' });
    expect({ status: stopped.status, location: headerOf(stopped.headers, 'location') }).toEqual({ status: 302, location: '/moved-here' });
    const followed = await http.request({ method: 'GET', url: `${target.base}/moved` });
    expect({ status: followed.status, body: followed.body.toString() }).toEqual({ status: 200, body: 'here' });
  });

  it('a target reset mid-body: the stream errors with "error decoding response body" after the bytes received', async () => {
    target.route('/reset', ({ res }) => {
      res.writeHead(200, { 'content-length': 100_000 });
      res.write('partial');
    });
    const { events, ended } = await within(
      streamAll(http, `${target.base}/reset`, {}, (event) => {
        // The first piece is here: now the target resets.
        if (event.type === 'body') void target.arrival('/reset').then(({ req }) => req.socket.resetAndDestroy());
      }),
      10_000,
      'the reset stream to end',
    );
    expect(Buffer.concat(bodyChunks(events)).toString()).toBe('partial');
    expect(ended.error).toBeInstanceOf(HttpBodyError);
    expect(ended.error).toMatchObject({ bodyError: 'error decoding response body' });
  });
});

describe('http/request at --concurrent-requests 4', () => {
  let target: Target;
  let manager: EnvironmentManager;
  let environment: Environment;

  beforeAll(async () => {
    target = await startTarget();
    const executor = await startListeningExecutor({ extraArgs: ['--concurrent-requests', '4'] });
    manager = await EnvironmentManager.connect('http-probe-4', executor.url ?? '', { clientName: 'exec-rx-spec' });
    const env = manager.defaultEnvironment();
    if (env === undefined) throw new Error('no default environment');
    environment = env;
  });
  afterAll(async () => {
    await manager.close({ terminateProcesses: true });
  });

  it('answers environment/status and process/start at once while a request waits for its head', async () => {
    target.route('/hold-4', () => undefined);
    const hang = settled(environment.getHttpClient().request({ method: 'GET', url: `${target.base}/hold-4`, timeoutMs: 2000 }));
    await within(target.arrival('/hold-4'), 5000, 'the held request to arrive');
    let asked = Date.now();
    const status = await within(settled(manager.getEnvironmentStatus('http-probe-4')), 5000, 'environment/status');
    expect(status.value).toEqual({ status: 'ready' });
    expect(status.at - asked).toBeLessThan(1000);
    asked = Date.now();
    const started = await within(settled(environment.getExecBackend().start({ argv: ['true'], cwd: '/tmp', env: PATH_ENV })), 5000, 'process/start');
    expect(started.error).toBeUndefined();
    expect(started.at - asked).toBeLessThan(1000);
    const ended = await within(hang, 10_000, 'the held request to time out');
    expect(ended.at).toBeGreaterThan(started.at);
    expect(ended.error).toBeInstanceOf(RpcError);
    if (started.value !== undefined) await within(started.value.process.wait(), 5000, 'the process to exit');
  });
});
