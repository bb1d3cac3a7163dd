/**
 * CORS on the operator API, on a real host on loopback (no executor needed): off by default (a preflight
 * is answered like any request without a token, 401, with no CORS header); with `corsOrigins`, a preflight
 * from a listed origin is 204 with the allow headers and that origin (never `*`), one from another origin is
 * 403 `FORBIDDEN_ORIGIN` without CORS headers, and the answers to a listed origin carry
 * `Access-Control-Allow-Origin`, `Access-Control-Expose-Headers` and `Vary: Origin`. `*` and what is not
 * a bare origin are refused at start and by `--cors-origin`.
 */
import { ConfigError } from '../../../src/errors';
import { parseCorsOrigins } from '../../../src/host/api/cors';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import type { HostServer } from '../../../src/host/host-options';
import { startHostServer } from '../../../src/host/host-server';
import { trackForCleanup } from '../../support/executor';
import type { ApiResponse } from './api-client';
import { ApiClient, paths } from './api-client';
import { EXECUTOR_CREDENTIALS, expectProblem, OPERATOR_TOKEN } from './api-host';

const UI = 'http://127.0.0.1:5173';
const OTHER = 'http://127.0.0.1:5174';
const credentials = new Map([[EXECUTOR_CREDENTIALS.accessKeyId, EXECUTOR_CREDENTIALS.secretAccessKey]]);
const start = async (corsOrigins?: readonly string[]): Promise<HostServer> =>
  trackForCleanup(await startHostServer({ credentials, operator: { tokens: new OperatorTokens([OPERATOR_TOKEN]), ...(corsOrigins === undefined ? {} : { corsOrigins }) } }));

const preflight = (api: ApiClient, origin: string, method = 'POST'): Promise<ApiResponse> =>
  api.request('OPTIONS', paths.processes('e'), { token: null, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type, idempotency-key' } });

const corsHeaders = (response: ApiResponse): Record<string, string | string[] | undefined> =>
  Object.fromEntries(Object.entries(response.headers).filter(([name]) => name.startsWith('access-control-')));

describe('operator API: CORS', () => {
  let host: HostServer;
  let api: ApiClient;
  beforeAll(async () => {
    host = await start([UI, 'http://127.0.0.1:5175']);
    api = new ApiClient(host.url, OPERATOR_TOKEN);
  });

  it('answers a preflight from a listed origin with 204, that origin and the allow headers (no credentials)', async () => {
    const answer = await preflight(api, UI);
    expect({ status: answer.status, vary: answer.headers.vary, cors: corsHeaders(answer), body: answer.text }).toEqual({
      status: 204,
      vary: 'Origin',
      cors: {
        'access-control-allow-origin': UI,
        'access-control-allow-methods': 'GET, HEAD, POST, DELETE',
        'access-control-allow-headers': 'authorization, content-type, idempotency-key, last-event-id, accept',
        'access-control-max-age': '600',
      },
      body: '',
    });
  });

  it('refuses a preflight from another origin with 403 FORBIDDEN_ORIGIN and no CORS header', async () => {
    const answer = await preflight(api, OTHER);
    expectProblem(answer, 403, 'FORBIDDEN_ORIGIN', host.instanceId);
    expect(corsHeaders(answer)).toEqual({});
    expect(answer.headers.vary).toBe('Origin');
  });

  it('lets a listed origin read answers, refusals included; another origin gets none of the CORS headers', async () => {
    const ok = await api.get(paths.environments, { headers: { origin: UI } });
    expect({ status: ok.status, vary: ok.headers.vary, cors: corsHeaders(ok) }).toEqual({
      status: 200,
      vary: 'Origin',
      cors: { 'access-control-allow-origin': UI, 'access-control-expose-headers': 'exec-rx-host-instance, exec-rx-host-replica, idempotent-replayed, location, retry-after, www-authenticate, allow' },
    });
    const refused = await api.get(paths.environments, { token: null, headers: { origin: UI } });
    expect({ status: refused.status, origin: refused.headers['access-control-allow-origin'] }).toEqual({ status: 401, origin: UI });
    const document = await api.get(paths.openapi, { token: null, headers: { origin: UI } });
    expect({ status: document.status, origin: document.headers['access-control-allow-origin'] }).toEqual({ status: 200, origin: UI });
    const other = await api.get(paths.environments, { headers: { origin: OTHER } });
    expect({ status: other.status, vary: other.headers.vary, cors: corsHeaders(other) }).toEqual({ status: 200, vary: 'Origin', cors: {} });
    // An OPTIONS that is not a preflight (no Access-Control-Request-Method) is any other request.
    expectProblem(await api.request('OPTIONS', paths.environments, { token: null, headers: { origin: UI } }), 401, 'UNAUTHORIZED', host.instanceId);
  });

  it('stays same-origin without the option: a preflight is 401 without CORS headers', async () => {
    const plain = await start();
    const answer = await preflight(new ApiClient(plain.url, OPERATOR_TOKEN), UI);
    expectProblem(answer, 401, 'UNAUTHORIZED', plain.instanceId);
    expect({ cors: corsHeaders(answer), vary: answer.headers.vary }).toEqual({ cors: {}, vary: undefined });
  });

  it('refuses * and what is not a bare origin, at start and in parseCorsOrigins, with a ConfigError', async () => {
    await expect(start(['*'])).rejects.toThrow(ConfigError);
    const refusals: readonly [readonly string[], string][] = [
      [['*'], '--cors-origin * is refused: name each origin a UI is served from (e.g. http://127.0.0.1:5173)'],
      [[`${UI},*`], '--cors-origin * is refused: name each origin a UI is served from (e.g. http://127.0.0.1:5173)'],
      [['null'], '--cors-origin null is refused: name each origin a UI is served from (e.g. http://127.0.0.1:5173)'],
      [[`${UI}/`], `--cors-origin "${UI}/" is not a bare origin (no path, query, user or trailing slash; lower case; no default port): did you mean ${UI}?`],
      [['http://Example.com:80'], '--cors-origin "http://Example.com:80" is not a bare origin (no path, query, user or trailing slash; lower case; no default port): did you mean http://example.com?'],
      [['127.0.0.1:5173'], '--cors-origin "127.0.0.1:5173" is not an origin: write scheme://host[:port], e.g. http://127.0.0.1:5173'],
      [['ftp://example.com'], '--cors-origin "ftp://example.com" is not an origin: write scheme://host[:port], e.g. http://127.0.0.1:5173'],
      [[''], '--cors-origin "" is not an origin: write scheme://host[:port], e.g. http://127.0.0.1:5173'],
    ];
    for (const [values, message] of refusals) {
      let caught: unknown;
      try {
        parseCorsOrigins(values);
      } catch (error: unknown) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ConfigError);
      expect(caught).toMatchObject({ message });
    }
    expect(parseCorsOrigins([`${UI},https://ui.example`, UI])).toEqual([UI, 'https://ui.example']);
  });
});
