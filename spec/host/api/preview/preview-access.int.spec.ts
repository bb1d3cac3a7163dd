/** Who may open a preview: links (forged, for another port, expired, revoked), roles, sharing levels, the host-name form, and a host without --allow-http. */
import '../../../support/executor';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { OperatorTokens } from '../../../../src/host/api/operator-tokens';
import { API_PREFIX } from '../../../../src/wire/operator-api';
import type { HttpTarget } from '../../../support/http-target';
import { expectStatus, OPERATOR_TOKEN, SECOND_OPERATOR_TOKEN, startApiHost } from '../api-host';
import { openRequest, raw } from '../files-support';
import type { PreviewHost } from './preview-support';
import { makeLink, pathOf, preview, sessionCookie, startPreviewHost, startTarget } from './preview-support';

jest.setTimeout(60_000);

const VIEW_TOKEN = 'preview-spec-view-token-do-not-print';
const codeOf = (body: Buffer): unknown => (JSON.parse(body.toString()) as { code?: unknown }).code;

/** The host's clock, which a test moves forward (its timers keep real delays). */
const clock: SchedulerLike & { offset: number } = {
  offset: 0,
  now(): number {
    return Date.now() + this.offset;
  },
  schedule: asyncScheduler.schedule.bind(asyncScheduler),
};

describe('who may open a preview', () => {
  let host: PreviewHost;
  let target: HttpTarget;
  const path = (rest: string, port = target.port): string => `/${host.environmentId}/${port}${rest}`;

  beforeAll(async () => {
    host = await startPreviewHost({
      environmentId: 'preview-2',
      tokens: [OPERATOR_TOKEN, { name: 'second', secret: SECOND_OPERATOR_TOKEN }, { name: 'viewer', role: 'view', secret: VIEW_TOKEN }],
      http: { previewDomain: 'preview.localhost', publicRate: 1 },
      host: { scheduler: clock },
    });
    target = await startTarget(host);
  });
  afterAll(async () => {
    await target.stop();
  });

  it('refuses a forged link and a link for another port: 401 PREVIEW_LINK_INVALID, nothing passed on', async () => {
    const link = await makeLink(host, target.port);
    const url = new URL(link.pathUrl);
    const grant = url.searchParams.get('exec-rx-preview-link') ?? '';
    const forged = `${grant.slice(0, 10)}${grant[10] === 'A' ? 'B' : 'A'}${grant.slice(11)}`;
    const refused = await preview(host, 'GET', `${url.pathname}?exec-rx-preview-link=${encodeURIComponent(forged)}`);
    expect({ status: refused.status, code: codeOf(refused.body) }).toEqual({ status: 401, code: 'PREVIEW_LINK_INVALID' });
    expect(refused.body.toString()).toContain('not one this host signed');
    const elsewhere = await preview(host, 'GET', `${path('/', target.port + 1)}?exec-rx-preview-link=${encodeURIComponent(grant)}`);
    expect({ status: elsewhere.status, code: codeOf(elsewhere.body) }).toEqual({ status: 401, code: 'PREVIEW_LINK_INVALID' });
    expect(elsewhere.body.toString()).toContain('for another environment or port');
    // A session cookie made from a link is not a link, nor the other way round.
    const { cookie } = await sessionCookie(host, link);
    const session = cookie.slice(cookie.indexOf('=') + 1);
    const asLink = await preview(host, 'GET', `${url.pathname}?exec-rx-preview-link=${encodeURIComponent(session)}`);
    expect(asLink.status).toBe(401);
    const asCookie = await preview(host, 'GET', path('/hello'), { headers: { cookie: `${cookie.slice(0, cookie.indexOf('='))}=${grant}` } });
    expect(asCookie.status).toBe(401);
  });

  it('refuses an expired link, and its cookie once expired: the link says for how long it is good', async () => {
    const link = await makeLink(host, target.port);
    expect(Date.parse(link.expiresAt) - clock.now()).toBeGreaterThan(59 * 60_000);
    const { cookie } = await sessionCookie(host, link);
    clock.offset += 3_600_001;
    try {
      const expired = await preview(host, 'GET', pathOf(link.pathUrl));
      expect({ status: expired.status, code: codeOf(expired.body) }).toEqual({ status: 401, code: 'PREVIEW_LINK_INVALID' });
      expect(expired.body.toString()).toContain('expired');
      const stale = await preview(host, 'GET', path('/hello'), { headers: { cookie } });
      expect({ status: stale.status, code: codeOf(stale.body) }).toEqual({ status: 401, code: 'PREVIEW_LINK_INVALID' });
      expect(stale.body.toString()).toContain('the preview session is expired: open a new link');
    } finally {
      clock.offset = 0;
    }
  });

  it("revoking the token that made a link ends its links, cookies and open streams", async () => {
    const link = await makeLink(host, target.port, SECOND_OPERATOR_TOKEN);
    const { cookie } = await sessionCookie(host, link);
    expect((await preview(host, 'GET', path('/hello'), { headers: { cookie } })).status).toBe(200);
    const { req, answer: stream } = openRequest(host.previewUrl, 'GET', path('/sse'), { headers: { cookie, accept: 'text/event-stream' } });
    const head = new Promise<number>((resolve) => req.once('response', (res) => resolve(res.statusCode ?? 0)));
    req.end();
    expect(await head).toBe(200);
    host.tokens.replaceWith(new OperatorTokens([OPERATOR_TOKEN, { name: 'viewer', role: 'view', secret: VIEW_TOKEN }]));
    const cut = await stream;
    expect(cut.complete).toBe(false);
    expect((await preview(host, 'GET', path('/hello'), { headers: { cookie } })).status).toBe(401);
    const again = await preview(host, 'GET', pathOf(link.pathUrl));
    expect(again.body.toString()).toContain('from a token that was revoked');
  });

  it('needs operate: a view token neither opens a preview nor makes a link (403 FORBIDDEN_ROLE)', async () => {
    const opened = await preview(host, 'GET', path('/hello'), { token: VIEW_TOKEN });
    expect({ status: opened.status, code: codeOf(opened.body) }).toEqual({ status: 403, code: 'FORBIDDEN_ROLE' });
    const linked = await host.api.as(VIEW_TOKEN).post(`${API_PREFIX}/environments/${host.environmentId}/previews/${target.port}/links`);
    expect({ status: linked.status, code: (linked.body as { code?: unknown }).code }).toEqual({ status: 403, code: 'FORBIDDEN_ROLE' });
  });

  it('serves a public port to anyone, rate-limited, until it is private again; the changes and links are audited', async () => {
    const route = `${API_PREFIX}/environments/${host.environmentId}/previews`;
    expectStatus(await host.api.request('PUT', `${route}/${target.port}`, { json: { sharing: 'public' } }), 200);
    expect(expectStatus(await host.api.get(route), 200)).toEqual({ environmentId: host.environmentId, previews: [{ port: target.port, sharing: 'public' }] });
    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push(await preview(host, 'GET', path('/hello')));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
    expect(answers[2]?.headers['retry-after']).toBeDefined();
    expectStatus(await host.api.request('PUT', `${route}/${target.port}`, { json: { sharing: 'private' } }), 200);
    expect((await preview(host, 'GET', path('/hello'))).status).toBe(401);
    const audit = host.log.filter((line) => line.includes('audit: preview'));
    expect(audit.some((line) => line.includes(`preview share in ${host.environmentId}`) || line.includes('preview share'))).toBe(true);
    expect(audit.some((line) => line.includes('preview link'))).toBe(true);
  });

  it('serves the host-name form on {port}-{environmentId}.DOMAIN: the app keeps its absolute paths', async () => {
    const link = await makeLink(host, target.port);
    expect(link.hostUrl).toBe(`http://${target.port}-preview-2.preview.localhost:${new URL(host.previewUrl).port}/?exec-rx-preview-link=${encodeURIComponent(new URL(link.pathUrl).searchParams.get('exec-rx-preview-link') ?? '')}`);
    const name = `${target.port}-preview-2.preview.localhost:${new URL(host.previewUrl).port}`;
    const exchanged = await preview(host, 'GET', pathOf(link.hostUrl ?? ''), { headers: { host: name } });
    expect({ status: exchanged.status, location: exchanged.headers.location }).toEqual({ status: 303, location: '/' });
    const cookie = (exchanged.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
    expect(cookie).toMatch(/^__Host-exec-rx-preview=/);
    const hello = await preview(host, 'GET', '/hello', { headers: { host: name, cookie } });
    expect({ status: hello.status, body: hello.body.toString() }).toEqual({ status: 200, body: 'hello' });
    const go = await preview(host, 'GET', '/go', { headers: { host: name, cookie } });
    expect(go.headers.location).toBe('/hello');
    const cookies = (await preview(host, 'GET', '/cookie', { headers: { host: name, cookie } })).headers['set-cookie'];
    expect(cookies).toEqual(['a=1; Path=/x; HttpOnly', 'b=2']);
  });

  it('refuses a malformed Host in the host-name form: 400 INVALID_HOST', async () => {
    for (const bad of ['99999-preview-2.preview.localhost', 'x.3000-preview-2.preview.localhost', '3000-Preview_2.preview.localhost', '3000-.preview.localhost']) {
      const answer = await preview(host, 'GET', '/hello', { token: OPERATOR_TOKEN, headers: { host: bad } });
      expect({ bad, status: answer.status, code: codeOf(answer.body) }).toEqual({ bad, status: 400, code: 'INVALID_HOST' });
    }
  });

  it('answers a WebSocket upgrade 501 UPGRADE_UNSUPPORTED, saying why', async () => {
    const answer = await preview(host, 'GET', path('/hello'), {
      token: OPERATOR_TOKEN,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' },
    });
    expect({ status: answer.status, code: codeOf(answer.body) }).toEqual({ status: 501, code: 'UPGRADE_UNSUPPORTED' });
    expect(answer.body.toString()).toContain('cannot carry a WebSocket');
  });
});

describe('a host without --allow-http', () => {
  it('answers previews and their routes 403 HTTP_DISABLED', async () => {
    const started = await startApiHost({ environmentId: 'preview-off', host: { previewPort: 0 } });
    const previewUrl = started.host.previewUrl ?? '';
    const answer = await raw(previewUrl, 'GET', '/preview-off/8000/', { token: OPERATOR_TOKEN });
    expect({ status: answer.status, code: codeOf(answer.body) }).toEqual({ status: 403, code: 'HTTP_DISABLED' });
    const link = await started.api.post(`${API_PREFIX}/environments/preview-off/previews/8000/links`);
    expect({ status: link.status, code: (link.body as { code?: unknown }).code }).toEqual({ status: 403, code: 'HTTP_DISABLED' });
    const fetched = await started.api.post(`${API_PREFIX}/environments/preview-off/fetch`, { url: 'http://127.0.0.1:8000/' });
    expect(fetched.status).toBe(403);
  });
});
