/**
 * Previews and fetches against the executor's request line and the target's time: 504 within the bound, a
 * hanging target holding no `process/start` (at --concurrent-requests 4), a wait for a port, an event
 * stream passed on live, and the fetch route through HostClient with its refusals.
 */
import '../../../support/executor';
import { firstValueFrom } from 'rxjs';
import { filter, take } from 'rxjs/operators';
import { HostApiError, HostClient } from '../../../../src/client';
import { linesOf } from '../../../../src/exec/output-views';
import { API_PREFIX } from '../../../../src/wire/operator-api';
import type { HttpTarget } from '../../../support/http-target';
import { closedPort, startHttpTarget } from '../../../support/http-target';
import { expectStatus, OPERATOR_TOKEN } from '../api-host';
import { openRequest } from '../files-support';
import type { PreviewHost } from './preview-support';
import { preview, startPreviewHost, startTarget } from './preview-support';

jest.setTimeout(60_000);

const codeOf = (body: Buffer): unknown => (JSON.parse(body.toString()) as { code?: unknown }).code;

describe('previews against the request line and the clock', () => {
  let host: PreviewHost;
  let target: HttpTarget;
  let client: HostClient;
  const path = (rest: string, port = target.port): string => `/${host.environmentId}/${port}${rest}`;

  beforeAll(async () => {
    host = await startPreviewHost({ environmentId: 'preview-3', executorArgs: ['--concurrent-requests', '4'], http: { timeoutMs: 1500, allow: ['localhost'], maxBodyBytes: 1024 * 1024 }, host: { metricsPort: 0 } });
    target = await startTarget(host);
    client = new HostClient({ url: host.host.url, token: OPERATOR_TOKEN });
  });
  afterAll(async () => {
    await client.close();
    await target.stop();
  });

  it('answers 504 PREVIEW_TIMEOUT when the target sends no head within the bound (1.5 s here)', async () => {
    const started = Date.now();
    const answer = await preview(host, 'GET', path('/hang'), { token: OPERATOR_TOKEN });
    const took = Date.now() - started;
    expect({ status: answer.status, code: codeOf(answer.body) }).toEqual({ status: 504, code: 'PREVIEW_TIMEOUT' });
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(1500 + 2000);
  });

  it('delays a process start by at most 1 s while a target hangs (the executor at --concurrent-requests 4)', async () => {
    const hanging = firstValueFrom(target.process.events$.pipe(linesOf('stdout'), filter((line) => line === 'hanging'), take(1)));
    const stuck = preview(host, 'GET', path('/hang'), { token: OPERATOR_TOKEN });
    await hanging;
    const started = Date.now();
    const answer = await host.api.post(`${API_PREFIX}/environments/${host.environmentId}/processes`, { argv: ['true'] });
    const took = Date.now() - started;
    expectStatus(answer, 201);
    expect(took).toBeLessThan(1000);
    expect((await stuck).status).toBe(504);
  });

  it('waits for a port on request (?exec-rx-wait-for-port=SECONDS) and passes the request once it listens', async () => {
    const port = await closedPort();
    const { req, answer } = openRequest(host.previewUrl, 'GET', `${path('/hello', port)}?exec-rx-wait-for-port=20`, { token: OPERATOR_TOKEN });
    req.end();
    const late = await startHttpTarget(host.environment, port);
    try {
      const got = await answer;
      expect({ status: got.status, body: got.body.toString() }).toEqual({ status: 200, body: 'hello' });
    } finally {
      await late.stop();
    }
    const unasked = await preview(host, 'GET', path('/hello', port), { token: OPERATOR_TOKEN });
    expect({ status: unasked.status, code: codeOf(unasked.body) }).toEqual({ status: 502, code: 'PREVIEW_PORT_CLOSED' });
    expect(unasked.body.toString()).toContain('exec-rx-wait-for-port=30');
  });

  it('passes an event stream on live: each event reaches the client as the target writes it', async () => {
    const { req, answer } = openRequest(host.previewUrl, 'GET', path('/sse'), { token: OPERATOR_TOKEN, headers: { accept: 'text/event-stream' } });
    const seen: number[] = [];
    req.once('response', (res) => res.on('data', (chunk: Buffer) => chunk.toString().split('\n\n').filter((event) => event.startsWith('data: tick')).forEach(() => seen.push(Date.now()))));
    req.end();
    const whole = await answer;
    expect(whole.body.toString().match(/data: tick \d/g)).toEqual(['data: tick 0', 'data: tick 1', 'data: tick 2', 'data: tick 3', 'data: tick 4']);
    expect(seen.length).toBe(5);
    // Written 300 ms apart: received apart, not in one piece at the end.
    expect((seen[4] ?? 0) - (seen[0] ?? 0)).toBeGreaterThan(900);
  });

  it('counts every preview request in the metrics', async () => {
    const text = await (await fetch(host.host.metricsUrl ?? '')).text();
    expect(text).toMatch(/exec_rx_host_http_requests_total\{kind="preview",status="2xx",outcome="answered"\} [1-9]/);
    expect(text).toMatch(/exec_rx_host_http_requests_total\{kind="preview",status="5xx",outcome="refused"\} [1-9]/);
  });

  describe('the fetch route (HostClient.http(id).fetch)', () => {
    it('fetches from inside the environment: a body both ways, a redirect followed hop by hop', async () => {
      const http = client.http(host.environmentId);
      const hello = await http.fetch(`http://127.0.0.1:${target.port}/hello`);
      expect({ status: hello.status, type: hello.headers.get('content-type'), body: await hello.text() }).toEqual({ status: 200, type: 'text/plain', body: 'hello' });
      const echoed = await http.fetch(`http://127.0.0.1:${target.port}/echo`, { method: 'POST', body: 'ping' });
      expect({ length: echoed.headers.get('x-length'), body: await echoed.text() }).toEqual({ length: '4', body: 'ping' });
      const followed = await http.fetch(`http://127.0.0.1:${target.port}/go`);
      expect({ status: followed.status, redirected: followed.redirected, url: followed.url, body: await followed.text() }).toEqual({
        status: 200,
        redirected: true,
        url: `http://127.0.0.1:${target.port}/hello`,
        body: 'hello',
      });
      const manual = await http.fetch(`http://127.0.0.1:${target.port}/go`, { redirect: 'manual' });
      expect({ status: manual.status, location: manual.headers.get('location') }).toEqual({ status: 302, location: '/hello' });
      const refused = await http.fetch(`http://127.0.0.1:${target.port}/go`, { redirect: 'error' }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 502, code: 'PREVIEW_FAILED' });
    });

    it.each([
      ['another host', 'http://10.0.0.1/'],
      ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
      ['a metadata name', 'http://metadata.google.internal/'],
      ['a name the allow list does not name', 'http://internal.example/'],
    ])('refuses %s: 403 HTTP_TARGET_REFUSED', async (_what, url) => {
      const refused = await client.http(host.environmentId).fetch(url).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(HostApiError);
      expect(refused).toMatchObject({ code: 'HTTP_TARGET_REFUSED', status: 403 });
    });

    it('normalises the url (2130706433 is 127.0.0.1) and reaches a name --http-allow names (localhost, by the executor\'s resolver)', async () => {
      const http = client.http(host.environmentId);
      const decimal = await http.fetch(`http://2130706433:${target.port}/hello`);
      expect({ status: decimal.status, url: decimal.url, body: await decimal.text() }).toEqual({ status: 200, url: `http://127.0.0.1:${target.port}/hello`, body: 'hello' });
      const named = await http.fetch(`http://localhost:${target.port}/hello`);
      expect({ status: named.status, body: await named.text() }).toEqual({ status: 200, body: 'hello' });
    });

    it('answers a body over the limit 413 BODY_TOO_LARGE, nothing sent', async () => {
      const refused = await client.http(host.environmentId).fetch(`http://127.0.0.1:${target.port}/echo`, { method: 'POST', body: new Uint8Array(1024 * 1024 + 1) }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 413, code: 'BODY_TOO_LARGE' });
    });

    it('refuses a redirect to a disallowed host: 403 HTTP_TARGET_REFUSED', async () => {
      const refused = await client.http(host.environmentId).fetch(`http://127.0.0.1:${target.port}/evil`).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'HTTP_TARGET_REFUSED', status: 403 });
    });

    it('answers 502 PREVIEW_FAILED for a port nothing listens on', async () => {
      const refused = await client.http(host.environmentId).fetch(`http://127.0.0.1:${await closedPort()}/`).catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'PREVIEW_FAILED', status: 502 });
    });
  });
});
