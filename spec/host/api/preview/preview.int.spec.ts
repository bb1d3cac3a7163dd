/** Previews through a real host and executor: the path form, links and cookies, headers both ways, streaming, and the target's failures. */
import '../../../support/executor';
import type { HttpTarget } from '../../../support/http-target';
import { OPERATOR_TOKEN } from '../api-host';
import type { PreviewHost } from './preview-support';
import { makeLink, preview, sessionCookie, startPreviewHost, startTarget } from './preview-support';

jest.setTimeout(60_000);

describe('previews (path form)', () => {
  let host: PreviewHost;
  let target: HttpTarget;
  const path = (rest: string): string => `/${host.environmentId}/${target.port}${rest}`;

  beforeAll(async () => {
    host = await startPreviewHost({ environmentId: 'preview-1' });
    target = await startTarget(host);
  });
  afterAll(async () => {
    await target.stop();
  });

  it('passes a request with an operator token to the port and answers with the sandbox and no referrer', async () => {
    const answer = await preview(host, 'GET', path('/hello'), { token: OPERATOR_TOKEN });
    expect({ status: answer.status, body: answer.body.toString() }).toEqual({ status: 200, body: 'hello' });
    expect(answer.headers['content-security-policy']).toMatch(/^sandbox allow-scripts allow-forms/);
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
  });

  it('refuses a request without a token, link or cookie: 401', async () => {
    const answer = await preview(host, 'GET', path('/hello'));
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('exchanges a link for a __Host- cookie (HttpOnly, SameSite=Lax, Secure) by a redirect that drops the link', async () => {
    const link = await makeLink(host, target.port);
    const { cookie, answer } = await sessionCookie(host, link);
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe(`/${host.environmentId}/${target.port}/`);
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
    const setCookie = answer.headers['set-cookie']?.[0] ?? '';
    expect(setCookie).toMatch(/^__Host-exec-rx-preview-preview-1-\d+=/);
    expect(setCookie).toMatch(/; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
    const opened = await preview(host, 'GET', path('/hello'), { headers: { cookie } });
    expect({ status: opened.status, body: opened.body.toString() }).toEqual({ status: 200, body: 'hello' });
  });

  it('redirects /{env}/{port} to its trailing slash', async () => {
    const answer = await preview(host, 'GET', `/${host.environmentId}/${target.port}?a=1`, { token: OPERATOR_TOKEN });
    expect({ status: answer.status, location: answer.headers.location }).toEqual({ status: 301, location: `/${host.environmentId}/${target.port}/?a=1` });
  });

  it('gives the target Host 127.0.0.1:PORT and X-Forwarded-*, and neither the operator token nor the preview cookie', async () => {
    const link = await makeLink(host, target.port);
    const { cookie } = await sessionCookie(host, link);
    const answer = await preview(host, 'GET', path('/headers'), { headers: { cookie: `app=1; ${cookie}`, 'x-forwarded-host': 'spoofed', connection: 'x-drop', 'x-drop': 'gone' } });
    const seen = new Map(JSON.parse(answer.body.toString()) as [string, string][]);
    const previewHost = new URL(host.previewUrl).host;
    expect(seen.get('host')).toBe(`127.0.0.1:${target.port}`);
    expect(seen.get('x-forwarded-host')).toBe(previewHost);
    expect(seen.get('x-forwarded-proto')).toBe('http');
    expect(seen.get('x-forwarded-prefix')).toBe(`/${host.environmentId}/${target.port}`);
    expect(seen.get('cookie')).toBe('app=1');
    expect(seen.has('authorization')).toBe(false);
    expect(seen.has('x-drop')).toBe(false);
    const byToken = new Map(JSON.parse((await preview(host, 'GET', path('/headers'), { token: OPERATOR_TOKEN })).body.toString()) as [string, string][]);
    expect(byToken.has('authorization')).toBe(false);
  });

  it('rewrites Location and Set-Cookie for the path form, and strips a cookie Domain', async () => {
    const go = await preview(host, 'GET', path('/go'), { token: OPERATOR_TOKEN });
    expect({ status: go.status, location: go.headers.location }).toEqual({ status: 302, location: path('/hello') });
    const abs = await preview(host, 'GET', path('/abs'), { token: OPERATOR_TOKEN });
    expect(abs.headers.location).toBe(path('/hello?x=1'));
    const cookies = (await preview(host, 'GET', path('/cookie'), { token: OPERATOR_TOKEN })).headers['set-cookie'];
    expect(cookies).toEqual([`a=1; Path=${path('/x')}; HttpOnly`, `b=2; Path=${path('/')}`]);
  });

  it('passes a request body and answers 413 past the limit', async () => {
    const body = Buffer.alloc(100_000, 7);
    const echoed = await preview(host, 'POST', path('/echo'), { token: OPERATOR_TOKEN, body });
    expect({ status: echoed.status, length: echoed.headers['x-length'] }).toEqual({ status: 200, length: '100000' });
    const over = await preview(host, 'POST', path('/echo'), { token: OPERATOR_TOKEN, body: Buffer.alloc(10 * 1024 * 1024 + 1) });
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body.toString())).toMatchObject({ code: 'BODY_TOO_LARGE' });
  });

  it('streams a 20 MB body whole', async () => {
    const answer = await preview(host, 'GET', path(`/big?n=${20_000_000}`), { token: OPERATOR_TOKEN });
    expect({ status: answer.status, length: answer.body.length, complete: answer.complete }).toEqual({ status: 200, length: 20_000_000, complete: true });
  });

  it('cuts the answer when the target resets mid-body (never a hung one)', async () => {
    const answer = await preview(host, 'GET', path('/reset'), { token: OPERATOR_TOKEN });
    expect(answer.status).toBe(200);
    expect(answer.complete).toBe(false);
    expect(answer.body.length).toBeLessThan(1_000_000);
  });

  it('answers 502 PREVIEW_PORT_CLOSED when nothing listens on the port', async () => {
    const answer = await preview(host, 'GET', `/${host.environmentId}/1/`, { token: OPERATOR_TOKEN });
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ code: 'PREVIEW_PORT_CLOSED' });
  });
});
