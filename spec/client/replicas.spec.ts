/**
 * HostClient with several urls (the replicas of one exec-rx cluster, issue 33), against small HTTP
 * servers of this spec's own on loopback: a url that refuses connections, or answers 502/503/504, is
 * left for the next at once and the client stays there; a 503 with `Retry-After` (a replica answering
 * for a process another one owns) is retried after it, within `maxOfflineMs`; an event stream that drops
 * resumes by seq on the next url, nothing lost or doubled; and a 404 from a replica with the same
 * instance id (the cluster's) is not taken for a host restart. Waits run on a virtual clock: nothing
 * here sleeps, every step awaits a request or an answer.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { HostApiError, HostClient } from '../../src/client';
import type { HostProcessEvent } from '../../src/client';
import { HOST_INSTANCE_HEADER, HOST_REPLICA_HEADER } from '../../src/wire/operator-api';
import { listenOnLoopback } from '../support/listen-on-loopback';
import { VirtualClock } from '../support/virtual-time';

const TOKEN = 'replica-spec-token-0123456789';
const CLUSTER = 'cluster-0000-spec';
const TERMINATE = '/api/v1/environments/e/processes/p/terminate';
const EVENTS = '/api/v1/environments/e/processes/p/events';

/** Lets pending I/O callbacks and promise work run once (an await on the event loop, not a timer). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Awaits `condition`, turn by turn (each turn lets sockets deliver what they have). */
async function until(condition: () => boolean, what: string, turns = 20_000): Promise<void> {
  for (let i = 0; i < turns; i += 1) {
    if (condition()) return;
    await turn();
  }
  throw new Error(`never happened: ${what}`);
}

type Handler = (req: IncomingMessage, res: ServerResponse, index: number) => void;

/** One replica of this spec: a loopback HTTP server answering as `handler` says, and the requests it got. */
interface Replica {
  readonly url: string;
  readonly requests: string[];
  close(): Promise<void>;
}

const replicas: Replica[] = [];

async function replica(name: string, handler: Handler): Promise<Replica> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method ?? '?'} ${req.url ?? '?'}`);
    res.setHeader(HOST_INSTANCE_HEADER, CLUSTER);
    res.setHeader(HOST_REPLICA_HEADER, name);
    handler(req, res, requests.length - 1);
  });
  const port = await listenOnLoopback(server, name);
  const made: Replica = {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  replicas.push(made);
  return made;
}

/** A loopback url nothing listens on (it was free a moment ago): connections to it are refused. */
async function refusingUrl(): Promise<string> {
  const server = createServer();
  const port = await listenOnLoopback(server, 'refusing');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': status < 400 ? 'application/json' : 'application/problem+json', ...headers });
  res.end(JSON.stringify(body));
};
const problem = (res: ServerResponse, status: number, code: string, headers: Record<string, string> = {}, instance = CLUSTER): void => {
  res.setHeader(HOST_INSTANCE_HEADER, instance);
  json(res, status, { type: 'about:blank', title: code.toLowerCase(), status, code, detail: `detail of ${code}`, hostInstance: instance }, headers);
};
const running: Handler = (_req, res) => json(res, 200, { running: true });

/** A fetch that records the url of each attempt. */
function recordingFetch(): { readonly fetch: typeof fetch; readonly urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    fetch: (input, init) => {
      urls.push(String(input));
      return globalThis.fetch(input, init);
    },
  };
}

function client(urls: readonly string[], clock: VirtualClock, fetch: typeof globalThis.fetch, maxOfflineMs = 90_000): HostClient {
  return new HostClient({ url: urls, token: TOKEN, fetch, scheduler: clock, random: () => 0.5, retry: { maxOfflineMs } });
}

/** Moves `clock` from one due action to the next until `work` settles, letting the sockets work in between. */
async function onClock<T>(clock: VirtualClock, work: Promise<T>): Promise<T> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) {
    const next = clock.actions[0];
    if (next === undefined) await turn();
    else await clock.advance(next.delay - clock.now());
  }
  return work;
}

/** An SSE frame of the process's event `seq` (output `line seq`, or `closed`). */
function frame(seq: number, closedAt: number): string {
  if (seq === closedAt) return `id: ${seq}\nevent: closed\ndata: ${JSON.stringify({ seq })}\n\n`;
  const chunk = Buffer.from(`line ${seq}\n`).toString('base64');
  return `id: ${seq}\nevent: output\ndata: ${JSON.stringify({ seq, stream: 'stdout', chunk })}\n\n`;
}

/** Serves the events after `?after=` up to `upTo`; then closes the body (`end`) or drops the connection (`drop`). */
function events(upTo: number, closedAt: number, then: 'end' | 'drop'): Handler {
  return (req, res) => {
    const after = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('after') ?? '0');
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    let text = '';
    for (let seq = after + 1; seq <= upTo; seq += 1) text += frame(seq, closedAt);
    // The frames are on the wire before the connection goes: the drop is mid-stream, after them.
    res.write(text, () => (then === 'end' ? res.end() : res.socket?.destroy()));
  };
}

/** What `events$` gave, and how it ended. */
async function collect(source: HostClient): Promise<{ readonly events: HostProcessEvent[]; readonly error: unknown }> {
  const got: HostProcessEvent[] = [];
  return new Promise((resolve) => {
    source.events$('e', 'p').subscribe({
      next: (event) => got.push(event),
      complete: () => resolve({ events: got, error: undefined }),
      error: (error: unknown) => resolve({ events: got, error }),
    });
  });
}

afterEach(async () => {
  await Promise.all(replicas.splice(0).map((r) => r.close()));
});

describe('HostClient with several urls (replicas of one cluster)', () => {
  it('moves on at once from a url that refuses connections, and stays on the one that answered', async () => {
    const refused = await refusingUrl();
    const b = await replica('b', running);
    const clock = new VirtualClock();
    const recording = recordingFetch();
    const hosts = client([refused, b.url], clock, recording.fetch);
    await expect(hosts.terminate('e', 'p')).resolves.toBe(true);
    await expect(hosts.terminate('e', 'p')).resolves.toBe(true);
    expect(recording.urls).toEqual([`${refused}${TERMINATE}`, `${b.url}${TERMINATE}`, `${b.url}${TERMINATE}`]);
    expect(b.requests).toEqual([`POST ${TERMINATE}`, `POST ${TERMINATE}`]);
    // No wait at all: the next url of the round is tried at once.
    expect(clock.delays).toEqual([]);
  });

  it.each([502, 503, 504])('moves on at once from a url that answers %i', async (status) => {
    const a = await replica('a', (_req, res) => (status === 503 ? problem(res, 503, 'HOST_STOPPING') : json(res, status, {})));
    const b = await replica('b', running);
    const clock = new VirtualClock();
    const hosts = client([a.url, b.url], clock, recordingFetch().fetch);
    await expect(hosts.terminate('e', 'p')).resolves.toBe(true);
    await expect(hosts.terminate('e', 'p')).resolves.toBe(true);
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(2);
    expect(clock.delays).toEqual([]);
  });

  it('goes round the urls and backs off once every one of a round failed', async () => {
    const refused = await refusingUrl();
    const b = await replica('b', (_req, res, i) => (i < 1 ? json(res, 502, {}) : running(_req, res, i)));
    const clock = new VirtualClock();
    const recording = recordingFetch();
    const hosts = client([refused, b.url], clock, recording.fetch);
    await expect(onClock(clock, hosts.terminate('e', 'p'))).resolves.toBe(true);
    // refused (at once) → b 502 (the round failed: one backoff, 200 ms × (1 − 0.5 × 0.5)) → refused (at once) → b 200.
    expect(recording.urls.map((u) => u.startsWith(refused))).toEqual([true, false, true, false]);
    expect(clock.delays).toEqual([150]);
  });

  it('retries a 503 with Retry-After (a process another replica owns) only after it, on the next url', async () => {
    const a = await replica('a', (_req, res) => problem(res, 503, 'PROCESS_ELSEWHERE', { 'retry-after': '2' }));
    const b = await replica('b', running);
    const clock = new VirtualClock();
    const hosts = client([a.url, b.url], clock, recordingFetch().fetch);
    const call = hosts.terminate('e', 'p');
    await until(() => clock.actions.length > 0, 'the wait Retry-After asks for');
    expect(clock.delays).toEqual([2_000]);
    await clock.advance(1_999);
    expect(b.requests).toHaveLength(0);
    await clock.advance(1);
    await expect(call).resolves.toBe(true);
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);
  });

  it('bounds the Retry-After retries by maxOfflineMs: then HOST_UNREACHABLE with the last answer', async () => {
    const a = await replica('a', (_req, res) => problem(res, 503, 'PROCESS_ELSEWHERE', { 'retry-after': '2' }));
    const b = await replica('b', (_req, res) => problem(res, 503, 'PROCESS_ELSEWHERE', { 'retry-after': '2' }));
    const clock = new VirtualClock();
    const hosts = client([a.url, b.url], clock, recordingFetch().fetch, 5_000);
    const error = await onClock(clock, hosts.terminate('e', 'p')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'HOST_UNREACHABLE' });
    expect(clock.now()).toBe(5_000);
    // At 0, 2, 4 and 5 s (the last wait cut to what was left), alternating.
    expect(clock.delays).toEqual([2_000, 2_000, 1_000]);
    expect(a.requests.length + b.requests.length).toBe(4);
    expect(a.requests).toHaveLength(2);
  });

  it('resumes an event stream that dropped mid-way by seq on the next url: nothing lost or doubled', async () => {
    const a = await replica('a', events(3, 7, 'drop'));
    const b = await replica('b', events(7, 7, 'end'));
    const clock = new VirtualClock();
    const { events: got, error } = await collect(client([a.url, b.url], clock, recordingFetch().fetch));
    expect(error).toBeUndefined();
    expect(got.map((e) => `${e.type}:${e.type === 'truncated' ? e.nextSeq : e.seq}`)).toEqual(['output:1', 'output:2', 'output:3', 'output:4', 'output:5', 'output:6', 'closed:7']);
    const text = got.map((e) => (e.type === 'output' ? Buffer.from(e.chunk).toString('utf8') : '')).join('');
    expect(text).toBe('line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n');
    expect(a.requests).toEqual([`GET ${EVENTS}?after=0`]);
    expect(b.requests).toEqual([`GET ${EVENTS}?after=3`]);
    // Only the idle cuts were armed: no backoff between the urls.
    expect(clock.delays.every((d) => d === 45_000)).toBe(true);
  });

  it('resumes on the next url when the first stops answering the stream (refused, then 503)', async () => {
    let aDown = false;
    const a = await replica('a', (req, res, i) => (i === 0 ? events(2, 7, 'drop')(req, res, i) : problem(res, 503, 'HOST_STOPPING')));
    const b = await replica('b', (req, res, i) => {
      if (i > 0) return events(7, 7, 'end')(req, res, i);
      aDown = true;
      res.socket?.destroy();
    });
    const clock = new VirtualClock();
    const done = collect(client([a.url, b.url], clock, recordingFetch().fetch));
    // a (1, 2, drop) → b at once (reset before an answer) → a at once (503): the round failed, one
    // backoff (150 ms) → b from after=2.
    await until(() => clock.delays.includes(150), 'the backoff after a round of failures');
    await clock.advance(150);
    const { events: got, error } = await done;
    expect(error).toBeUndefined();
    expect(aDown).toBe(true);
    expect(got.map((e) => (e.type === 'truncated' ? -1 : e.seq))).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(clock.delays.filter((d) => d !== 45_000)).toEqual([150]);
    expect(a.requests).toEqual([`GET ${EVENTS}?after=0`, `GET ${EVENTS}?after=2`]);
    expect(b.requests).toEqual([`GET ${EVENTS}?after=2`, `GET ${EVENTS}?after=2`]);
  });

  it('takes a 404 from another replica of the same cluster (same instance id) for its answer, not a restart', async () => {
    const a = await replica('a', events(3, 7, 'drop'));
    const b = await replica('b', (_req, res) => problem(res, 404, 'PROCESS_NOT_FOUND'));
    const { events: got, error } = await collect(client([a.url, b.url], new VirtualClock(), recordingFetch().fetch));
    expect(got).toHaveLength(3);
    expect(error).toBeInstanceOf(HostApiError);
    expect(error).toMatchObject({ code: 'PROCESS_NOT_FOUND', status: 404, hostInstance: CLUSTER });
  });

  it('still takes a 404 from another instance id for a restart that lost the process (PROCESS_GONE)', async () => {
    const a = await replica('a', events(3, 7, 'drop'));
    const b = await replica('b', (_req, res) => problem(res, 404, 'PROCESS_NOT_FOUND', {}, 'another-cluster'));
    const { events: got, error } = await collect(client([a.url, b.url], new VirtualClock(), recordingFetch().fetch));
    expect(got).toHaveLength(3);
    expect(error).toMatchObject({ code: 'PROCESS_GONE', hostInstance: 'another-cluster', message: expect.stringContaining(`instance ${CLUSTER} replica a, now another-cluster replica b`) });
  });

  it('refuses an empty list of urls', () => {
    expect(() => new HostClient({ url: [], token: TOKEN })).toThrow(RangeError);
  });
});
