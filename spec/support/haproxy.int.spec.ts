/**
 * The HAProxy configuration docs/replicas.md shows (docs/haproxy.cfg), run by Debian's haproxy in front of two small
 * loopback HTTP servers of this spec's own: the Host header and the path reach a backend as the client
 * sent them (SigV4 signs both), requests go round the backends, a POST to a backend that was killed is
 * redispatched to the other (200, never a 503), and a backend answering 503 on /readyz leaves the pool
 * and comes back when it answers 200 again. Every wait is for a request or an answer to arrive.
 */
import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { trackForCleanup } from './executor';
import type { SpecHaproxy } from './haproxy';
import { HAPROXY_TEMPLATE, startHaproxy } from './haproxy';
import { listenOnLoopback } from './listen-on-loopback';

jest.setTimeout(30_000);

/** What a backend saw of one request. */
interface Seen {
  readonly method: string;
  readonly host: string;
  readonly url: string;
  readonly body: string;
}

/**
 * One backend: answers `{ backend, host, url }`, and /readyz with 200 or (not ready) 503. One that `drops`
 * reads each other request and closes its connection without an answer (a replica killed while it handled it).
 */
class Backend {
  readonly seen: Seen[] = [];
  ready = true;
  drops = false;
  healthChecks = 0;
  port = 0;
  private readonly server: Server;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly name: string) {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        if (req.url === '/readyz') {
          this.healthChecks += 1;
          res.writeHead(this.ready ? 200 : 503, { 'content-type': 'text/plain' });
          res.end(this.ready ? 'ready\n' : 'draining\n');
        } else if (this.drops) {
          this.seen.push({ method: req.method ?? '', host: req.headers.host ?? '', url: req.url ?? '', body });
          req.socket.destroy();
        } else {
          this.seen.push({ method: req.method ?? '', host: req.headers.host ?? '', url: req.url ?? '', body });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ backend: this.name }));
        }
        this.waiters.splice(0).forEach((wake) => wake());
      });
    });
  }

  async listen(): Promise<this> {
    this.port = await listenOnLoopback(this.server, this.name);
    return this;
  }

  /** Resolves once `condition` holds, checked after each request this backend answers. */
  async when(condition: () => boolean): Promise<void> {
    while (!condition()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Killed: no more connections accepted (a dead replica: refused). */
  close(): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}

/** One request through `proxy`, its connection closed after it: status and body. */
function send(proxy: SpecHaproxy, method: 'GET' | 'POST', path: string, host: string, body = '', extra: Record<string, string> = {}): Promise<{ readonly status: number; readonly body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { ...extra, host, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = request({ host: '127.0.0.1', port: proxy.port, method, path, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const backendOf = (answer: { readonly body: string }): string => {
  const parsed: unknown = JSON.parse(answer.body);
  return typeof parsed === 'object' && parsed !== null && 'backend' in parsed && typeof parsed.backend === 'string' ? parsed.backend : '?';
};

let a: Backend;
let b: Backend;
let proxy: SpecHaproxy;

// Stopped (haproxy first, then the backends) by the file's tracker, before its leak check.
beforeAll(async () => {
  a = trackForCleanup(await new Backend('a').listen());
  b = trackForCleanup(await new Backend('b').listen());
  proxy = trackForCleanup(await startHaproxy({ backends: [{ name: 'a', port: a.port }, { name: 'b', port: b.port }] }));
});

describe("the docs' HAProxy configuration", () => {
  it('is the one docs/replicas.md shows, and the spec runs it with only its ports replaced', () => {
    const template = readFileSync(HAPROXY_TEMPLATE, 'utf8');
    const page = readFileSync(join(__dirname, '..', '..', 'docs', 'replicas.md'), 'utf8');
    expect(page).toContain(`\`\`\`text\n${template}\`\`\``);
    expect(proxy.config).toContain(`bind 127.0.0.1:${proxy.port}\n`);
    expect(proxy.config).toContain(`server a 127.0.0.1:${a.port}\n    server b 127.0.0.1:${b.port}\n`);
    for (const line of ['mode http', 'timeout tunnel 1h', 'option redispatch 1', 'retries 3', 'retry-on conn-failure empty-response', 'http-request disable-l7-retry unless { method GET HEAD } || { path_end /direct/register } || { req.hdr(idempotency-key) -m found }', 'option httpchk GET /readyz', 'http-check expect status 200', 'inter 1s fall 2 rise 1', 'no option http-buffer-request', 'balance leastconn']) {
      expect(proxy.config).toContain(line);
    }
  });

  it('passes the Host header unchanged and never rewrites the path, going round the backends', async () => {
    const path = '/cloud/environment/env%2F1/direct/register?X-Amz-Date=20260101T000000Z&a=%20b';
    const first = await send(proxy, 'GET', path, 'exec-rx.example.com:8443');
    const second = await send(proxy, 'POST', '/api/v1//environments/e/processes', 'exec-rx.example.com', '{"argv":["true"]}');
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(new Set([backendOf(first), backendOf(second)])).toEqual(new Set(['a', 'b']));
    const seen = [...a.seen, ...b.seen];
    expect(seen).toEqual(
      expect.arrayContaining([
        { method: 'GET', host: 'exec-rx.example.com:8443', url: path, body: '' },
        { method: 'POST', host: 'exec-rx.example.com', url: '/api/v1//environments/e/processes', body: '{"argv":["true"]}' },
      ]),
    );
  });

  it('takes a backend answering 503 on /readyz out of the pool, and back once it answers 200', async () => {
    a.ready = false;
    // fall 2: down after two failed checks; the third comes after it was taken out.
    const from = a.healthChecks;
    await a.when(() => a.healthChecks >= from + 3);
    const before = a.seen.length;
    const answers = await Promise.all([1, 2, 3, 4].map(() => send(proxy, 'GET', '/api/v1/host', 'exec-rx.example.com')));
    expect(answers.map(backendOf)).toEqual(['b', 'b', 'b', 'b']);
    expect(a.seen.length).toBe(before);
    a.ready = true;
    // rise 1: one good check and it is back; the next check is after that.
    const back = a.healthChecks;
    await a.when(() => a.healthChecks >= back + 2);
    const again = await Promise.all([1, 2, 3, 4].map(() => send(proxy, 'GET', '/api/v1/host', 'exec-rx.example.com')));
    expect(new Set(again.map(backendOf))).toEqual(new Set(['a', 'b']));
  });

  it('redispatches a POST to a killed backend to the other one: 200, never a 503', async () => {
    await a.close();
    const before = b.seen.length;
    // At once, before any health check saw it die: HAProxy still sends to it, is refused, and redispatches.
    const answers = await Promise.all([1, 2, 3, 4].map((i) => send(proxy, 'POST', `/cloud/environment/e${i}/direct/register`, 'exec-rx.example.com', '{}')));
    expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map(backendOf)).toEqual(['b', 'b', 'b', 'b']);
    expect(b.seen.slice(before).map((s) => s.url).sort()).toEqual([1, 2, 3, 4].map((i) => `/cloud/environment/e${i}/direct/register`));
  });
});

describe("the docs' HAProxy configuration, a replica that dies while it handles a request", () => {
  let dying: Backend;
  let live: Backend;
  let balancer: SpecHaproxy;

  beforeAll(async () => {
    dying = trackForCleanup(await new Backend('dying').listen());
    live = trackForCleanup(await new Backend('live').listen());
    dying.drops = true;
    balancer = trackForCleanup(await startHaproxy({ backends: [{ name: 'dying', port: dying.port }, { name: 'live', port: live.port }] }));
  });

  const paths = (backend: Backend): string[] => backend.seen.map((s) => s.url);

  it("sends an executor's registration it got no answer to on to another replica: 200 (a failed one makes the executor exit)", async () => {
    const urls = [1, 2, 3, 4, 5, 6].map((i) => `/cloud/environment/dies-${i}/direct/register`);
    const answers = await Promise.all(urls.map((url) => send(balancer, 'POST', url, 'exec-rx.example.com', '{"transport":"direct_jsonrpc_v1"}')));
    expect(answers.map((x) => [x.status, backendOf(x)])).toEqual(urls.map(() => [200, 'live']));
    expect([...paths(live)].sort()).toEqual([...urls].sort());
    // The dying replica got some of them first (leastconn takes turns when both are idle).
    expect(paths(dying).filter((url) => urls.includes(url)).length).toBeGreaterThan(0);
  });

  it('sends a keyed start it got no answer to on to another replica (the Idempotency-Key makes it safe)', async () => {
    const urls = [1, 2, 3, 4, 5, 6].map((i) => `/api/v1/environments/dies/processes?keyed=${i}`);
    const answers = await Promise.all(urls.map((url, i) => send(balancer, 'POST', url, 'exec-rx.example.com', '{"argv":["true"]}', { 'idempotency-key': `key-${i}` })));
    expect(answers.map((x) => [x.status, backendOf(x)])).toEqual(urls.map(() => [200, 'live']));
    expect(paths(dying).filter((url) => urls.includes(url)).length).toBeGreaterThan(0);
  });

  it('never sends another POST twice: the one the dying replica got is answered 502, and reached no one else', async () => {
    const urls = [1, 2, 3, 4, 5, 6].map((i) => `/api/v1/environments/dies/processes?try=${i}`);
    const answers = await Promise.all(urls.map((url) => send(balancer, 'POST', url, 'exec-rx.example.com', '{"argv":["true"]}')));
    const dropped = urls.filter((url) => paths(dying).includes(url));
    expect(dropped.length).toBeGreaterThan(0);
    urls.forEach((url, i) => {
      const where = [...paths(dying), ...paths(live)].filter((seen) => seen === url);
      expect({ url, status: answers[i]?.status, times: where.length }).toEqual({ url, status: dropped.includes(url) ? 502 : 200, times: 1 });
    });
  });
});
