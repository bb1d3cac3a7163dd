/** What a preview changes in the headers on the way in and out (issue 42), in the path form and in the host-name form. */
import type { PreviewAddress } from '../../../../src/host/api/preview/preview-address';
import type { InboundFacts } from '../../../../src/host/api/preview/preview-headers';
import {
  cookieValue,
  inboundHeaders,
  outboundHeaders,
  PREVIEW_CSP,
  rewriteLocation,
  rewriteSetCookie,
  sessionCookieName,
} from '../../../../src/host/api/preview/preview-headers';

const PATH_FORM: PreviewAddress = { form: 'path', environmentId: 'env-1', port: 3000, rest: '/', prefix: '/env-1/3000' };
const HOST_FORM: PreviewAddress = { form: 'host', environmentId: 'env-1', port: 3000, rest: '/', prefix: '' };

const facts = (over: Partial<InboundFacts> = {}): InboundFacts => ({
  address: PATH_FORM,
  host: 'preview.example:8080',
  proto: 'https',
  clientAddress: '10.0.0.9',
  dropAuthorization: true,
  ...over,
});

/** Raw headers (as node gives `req.rawHeaders`) from pairs. */
const raw = (...pairs: [string, string][]): string[] => pairs.flat();

/** The pairs as `[name, value]`, for comparing. */
const asPairs = (headers: readonly { name: string; value: string }[]): [string, string][] => headers.map(({ name, value }) => [name, value]);

describe('inboundHeaders', () => {
  it("drops hop-by-hop headers and those the request's Connection names", () => {
    const headers = inboundHeaders(
      raw(['Connection', 'keep-alive, X-Session-Hop'], ['Keep-Alive', 'timeout=5'], ['X-Session-Hop', '1'], ['Upgrade', 'websocket'], ['TE', 'trailers'], ['Proxy-Authorization', 'Basic x'], ['Transfer-Encoding', 'chunked'], ['Accept', 'text/html']),
      facts(),
    );
    expect(headers.map((header) => header.name).filter((name) => !['host', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-prefix', 'x-forwarded-for'].includes(name))).toEqual(['accept']);
  });

  it("drops the client's Host, Accept-Encoding, Content-Length, Forwarded and X-Forwarded-*, and every exec-rx-* header", () => {
    const headers = inboundHeaders(
      raw(
        ['Host', 'evil.example'],
        ['Accept-Encoding', 'br'],
        ['Content-Length', '5'],
        ['Forwarded', 'for=6.6.6.6'],
        ['X-Forwarded-For', '6.6.6.6'],
        ['X-Forwarded-Host', 'evil.example'],
        ['X-Forwarded-Proto', 'http'],
        ['X-Forwarded-Prefix', '/evil'],
        ['X-Forwarded-Port', '1'],
        ['exec-rx-wait-for-port', '5'],
        ['Exec-Rx-Preview-Link', 'x'],
        ['Content-Type', 'text/plain'],
      ),
      facts(),
    );
    expect(asPairs(headers)).toEqual([
      ['content-type', 'text/plain'],
      ['host', '127.0.0.1:3000'],
      ['x-forwarded-host', 'preview.example:8080'],
      ['x-forwarded-proto', 'https'],
      ['x-forwarded-prefix', '/env-1/3000'],
      ['x-forwarded-for', '10.0.0.9'],
    ]);
  });

  it("drops the host's preview cookies and keeps the app's, and drops a Cookie left empty", () => {
    const mixed = inboundHeaders(raw(['Cookie', 'app=1; __Host-exec-rx-preview-env-1-3000=grant; __Host-exec-rx-preview=other;theme=dark']), facts());
    expect(mixed.filter((header) => header.name === 'cookie')).toEqual([{ name: 'cookie', value: 'app=1; theme=dark' }]);
    const ours = inboundHeaders(raw(['Cookie', '__Host-exec-rx-preview-env-1-3000=grant']), facts());
    expect(ours.some((header) => header.name === 'cookie')).toBe(false);
  });

  it('drops Authorization only when it was an operator token (dropAuthorization), else passes it to the app', () => {
    const request = raw(['Authorization', 'Bearer app-token']);
    expect(inboundHeaders(request, facts({ dropAuthorization: true })).some((header) => header.name === 'authorization')).toBe(false);
    expect(inboundHeaders(request, facts({ dropAuthorization: false })).filter((header) => header.name === 'authorization')).toEqual([{ name: 'authorization', value: 'Bearer app-token' }]);
  });

  it('in the host-name form adds no X-Forwarded-Prefix; without a Host or client address, no X-Forwarded-Host or -For', () => {
    const headers = inboundHeaders(raw(['Accept', '*/*']), facts({ address: HOST_FORM, host: undefined, clientAddress: undefined, proto: 'http' }));
    expect(asPairs(headers)).toEqual([
      ['accept', '*/*'],
      ['host', '127.0.0.1:3000'],
      ['x-forwarded-proto', 'http'],
    ]);
  });
});

describe('outboundHeaders', () => {
  it('drops hop-by-hop headers, HSTS and Content-Length, and adds the sandbox CSP, Referrer-Policy and nosniff', () => {
    const out = outboundHeaders(
      [
        { name: 'Connection', value: 'keep-alive, X-Hop' },
        { name: 'X-Hop', value: '1' },
        { name: 'Keep-Alive', value: 'timeout=5' },
        { name: 'Transfer-Encoding', value: 'chunked' },
        { name: 'Strict-Transport-Security', value: 'max-age=31536000' },
        { name: 'Content-Length', value: '12' },
        { name: 'Content-Type', value: 'text/html' },
      ],
      PATH_FORM,
    );
    expect(out).toEqual([
      ['content-type', 'text/html'],
      ['content-security-policy', PREVIEW_CSP],
      ['referrer-policy', 'no-referrer'],
      ['x-content-type-options', 'nosniff'],
    ]);
    expect(PREVIEW_CSP).toMatch(/^sandbox allow-scripts allow-forms /);
  });

  it('rewrites Location and Set-Cookie, and drops a Set-Cookie named like our own', () => {
    const out = outboundHeaders(
      [
        { name: 'Location', value: '/login' },
        { name: 'Set-Cookie', value: 'sid=1; Domain=example.com; Path=/app' },
        { name: 'Set-Cookie', value: '__Host-exec-rx-preview-env-1-3000=forged; Path=/' },
      ],
      PATH_FORM,
    );
    expect(out.slice(0, -3)).toEqual([
      ['location', '/env-1/3000/login'],
      ['set-cookie', 'sid=1; Path=/env-1/3000/app'],
    ]);
  });
});

describe('rewriteLocation', () => {
  it('puts an absolute path under the prefix in the path form, and leaves it in the host-name form', () => {
    expect(rewriteLocation('/login?next=%2F#top', PATH_FORM)).toBe('/env-1/3000/login?next=%2F#top');
    expect(rewriteLocation('/login', HOST_FORM)).toBe('/login');
  });

  it.each([['http://127.0.0.1:3000/a?b=1#c'], ['http://localhost:3000/a?b=1#c'], ['http://[::1]:3000/a?b=1#c'], ['https://127.0.0.1:3000/a?b=1#c']])(
    'makes %s, the target itself, a path on the preview',
    (location) => {
      expect(rewriteLocation(location, PATH_FORM)).toBe('/env-1/3000/a?b=1#c');
      expect(rewriteLocation(location, HOST_FORM)).toBe('/a?b=1#c');
    },
  );

  it('leaves an absolute url of another port or host, a protocol-relative one, a relative one and a non-http one alone', () => {
    const kept = ['http://127.0.0.1:3001/a', 'http://127.0.0.1/a', 'http://example.com:3000/a', '//127.0.0.1:3000/a', '//cdn.example/x', 'next', '../up', 'mailto:a@example.com', 'ftp://127.0.0.1:3000/a'];
    expect(kept.map((location) => rewriteLocation(location, PATH_FORM))).toEqual(kept);
  });

  it('takes the scheme default for a url without a port: http://localhost/ is port 80', () => {
    const onPort80: PreviewAddress = { ...PATH_FORM, port: 80, prefix: '/env-1/80' };
    expect(rewriteLocation('http://localhost/x', onPort80)).toBe('/env-1/80/x');
    expect(rewriteLocation('https://localhost/x', onPort80)).toBe('https://localhost/x');
  });
});

describe('rewriteSetCookie', () => {
  it('strips Domain= (any case) and keeps the other attributes', () => {
    expect(rewriteSetCookie('sid=1; domain=.example.com; HttpOnly; SameSite=Lax; Max-Age=60', HOST_FORM)).toBe('sid=1; HttpOnly; SameSite=Lax; Max-Age=60');
  });

  it("in the path form puts the cookie's Path under the prefix, and adds one when it had none", () => {
    expect(rewriteSetCookie('sid=1; Path=/app', PATH_FORM)).toBe('sid=1; Path=/env-1/3000/app');
    expect(rewriteSetCookie('sid=1; path=app', PATH_FORM)).toBe('sid=1; Path=/env-1/3000/app');
    expect(rewriteSetCookie('sid=1; HttpOnly', PATH_FORM)).toBe('sid=1; HttpOnly; Path=/env-1/3000/');
  });

  it("in the host-name form leaves the Path as the app set it, and adds none", () => {
    expect(rewriteSetCookie('sid=1; Path=/app', HOST_FORM)).toBe('sid=1; Path=/app');
    expect(rewriteSetCookie('sid=1', HOST_FORM)).toBe('sid=1');
  });

  it('drops a cookie named like our own preview cookies, in both forms', () => {
    expect(rewriteSetCookie('__Host-exec-rx-preview=x; Path=/', HOST_FORM)).toBeUndefined();
    expect(rewriteSetCookie(' __Host-exec-rx-preview-env-1-3000=x', PATH_FORM)).toBeUndefined();
  });
});

describe('the session cookie', () => {
  it('is one per preview in the path form (they share an origin) and one name in the host-name form', () => {
    expect(sessionCookieName(PATH_FORM)).toBe('__Host-exec-rx-preview-env-1-3000');
    expect(sessionCookieName(HOST_FORM)).toBe('__Host-exec-rx-preview');
  });

  it('is read from a Cookie header only when it is there exactly once', () => {
    expect(cookieValue('a=1; __Host-exec-rx-preview=grant; b=2', '__Host-exec-rx-preview')).toBe('grant');
    expect(cookieValue('__Host-exec-rx-preview=one; __Host-exec-rx-preview=two', '__Host-exec-rx-preview')).toBeUndefined();
    expect(cookieValue('__Host-exec-rx-preview-env-1-3000=grant', '__Host-exec-rx-preview')).toBeUndefined();
    expect(cookieValue(undefined, '__Host-exec-rx-preview')).toBeUndefined();
  });
});
