/**
 * HEAD on the operator API, against a real host and a real codex executor. RFC 9110 (9.3.2) has a server
 * answer HEAD wherever it answers GET, with the headers GET would send and no body: monitors and proxies
 * probe that way. An event stream's HEAD ends at once (it has no body to stream) and holds no place among
 * the host's streams, so the connection it came on serves the next request.
 */
import { Agent, request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { ProcessResource } from '../../../src/wire/operator-api';
import type { ApiResponse } from './api-client';
import { paths, within } from './api-client';
import type { ApiHost } from './api-host';
import { expectProblem, finished, OPERATOR_TOKEN, startApiHost, startProcess } from './api-host';

const ENV = 'head-spec';

/** What a comparison of a GET and a HEAD looks at: everything but the body and the date. */
const headersOf = (response: ApiResponse): Record<string, unknown> => {
  const { date: _date, ...rest } = response.headers;
  return { status: response.status, ...rest };
};

describe('operator API: HEAD', () => {
  let setup: ApiHost;
  let done: ProcessResource;
  /** Runs until the end of the spec: its event stream never ends by itself. */
  let running: ProcessResource;

  beforeAll(async () => {
    setup = await startApiHost({ environmentId: ENV });
    done = await startProcess(setup.api, ENV, { argv: ['echo', 'head'] });
    running = await startProcess(setup.api, ENV, { argv: ['sleep', '60'] });
    await finished(setup.api, ENV, done.id);
  });

  afterAll(async () => {
    await setup.api.post(paths.terminate(ENV, running.id));
  });

  it('answers HEAD wherever GET answers, with the headers GET sends (content-length included) and no body', async () => {
    const targets = [paths.host, paths.environments, paths.environment(ENV), paths.processes(ENV), paths.process(ENV, done.id)];
    const outcomes: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const target of targets) {
      const get = await setup.api.get(target);
      const head = await setup.api.request('HEAD', target);
      expect(get.text.length).toBeGreaterThan(0);
      outcomes[target] = { ...headersOf(head), body: head.text };
      expected[target] = { ...headersOf(get), 'content-length': String(Buffer.byteLength(get.text)), body: '' };
    }
    expect(outcomes).toEqual(expected);
  });

  it('answers HEAD with the problem GET would get (404, 401), as headers only', async () => {
    const missing = await setup.api.request('HEAD', paths.process(ENV, 'no-such-process'));
    expect({ status: missing.status, type: missing.headers['content-type'], body: missing.text }).toEqual({ status: 404, type: 'application/problem+json', body: '' });
    expectProblem(await setup.api.get(paths.process(ENV, 'no-such-process')), 404, 'PROCESS_NOT_FOUND', setup.host.instanceId);
    const anonymous = await setup.api.request('HEAD', paths.environments, { token: null });
    expect({ status: anonymous.status, authenticate: anonymous.headers['www-authenticate'], body: anonymous.text }).toEqual({ status: 401, authenticate: 'Bearer', body: '' });
  });

  it('lists HEAD beside GET in Allow when a method is not allowed', async () => {
    const refused = await setup.api.request('PUT', paths.host, { json: {} });
    expectProblem(refused, 405, 'METHOD_NOT_ALLOWED', setup.host.instanceId);
    expect(refused.headers['allow']).toBe('GET, HEAD');
    const processes = await setup.api.request('PATCH', paths.processes(ENV), { json: {} });
    expect(processes.headers['allow']).toBe('GET, HEAD, POST');
  });

  it('leaves a kept-alive connection serving the next request after a HEAD on an event stream', async () => {
    // One socket, kept open: a HEAD whose stream the host did not end would hold it (and a place among
    // the streams), and the GET behind it would wait for ever.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const url = new URL(setup.host.url);
    const send = (method: string, path: string): Promise<{ status: number; reused: boolean; text: string }> =>
      new Promise((resolve, reject) => {
        const req = request({ agent, host: url.hostname, port: url.port, method, path, headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } }, (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.once('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, text: Buffer.concat(chunks).toString('utf8') }));
          res.once('error', reject);
        });
        req.once('error', reject);
        req.end();
      });
    try {
      const events = await within(send('HEAD', paths.events(ENV, running.id)), 10_000, "the HEAD on a running process's events");
      const overview = await within(send('HEAD', paths.overview), 10_000, 'the HEAD on the overview after it on the same connection');
      const next = await within(send('GET', paths.host), 10_000, 'the GET after both on the same connection');
      expect({ events: events.status, overview: overview.status, next: next.status, reused: [overview.reused, next.reused] }).toEqual({ events: 200, overview: 200, next: 200, reused: [true, true] });
      expect(JSON.parse(next.text)).toMatchObject({ eventStreams: 0 });
    } finally {
      agent.destroy();
    }
  });
  it("answers HEAD on an event stream with the stream's headers, ends it at once and holds no place among the streams", async () => {
    const targets = [paths.events(ENV, running.id), paths.overview];
    const heads: ApiResponse[] = [];
    for (const target of targets) heads.push(await setup.api.request('HEAD', target));
    expect((await setup.api.get(paths.host)).body).toMatchObject({ eventStreams: 0 });
    for (const [i, target] of targets.entries()) {
      const opened = await setup.api.events(target);
      if (!('stream' in opened)) throw new Error(`${target} refused: ${opened.refused.text}`);
      await opened.stream.close();
      const { date: _date, ...streamHeaders } = opened.stream.headers;
      const head = heads[i];
      expect(head && { target, ...headersOf(head), body: head.text }).toEqual({ target, status: 200, ...streamHeaders, body: '' });
    }
  });
});
