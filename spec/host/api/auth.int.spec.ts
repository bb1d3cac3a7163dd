/**
 * Who may call the operator API, against a real host and a real codex executor: without the operator
 * token (missing, wrong, malformed) every route answers 401 with `WWW-Authenticate: Bearer` and no
 * detail; executor credentials (the secret, a SigV4 signature, a capability token) open nothing there;
 * and an operator token opens nothing on the executors' routes (registration, WebSocket upgrade).
 */
import { join } from 'node:path';
import WebSocket from 'ws';
import { API_DOCS_CSP, DASHBOARD_CSP } from '../../../src/host/api/routes-public';
import { API_PREFIX } from '../../../src/wire/operator-api';
import { registerOk, signedHeaders } from '../signed-client';
import type { Registration } from '../signed-client';
import type { ApiResponse, RequestOptions } from './api-client';
import { paths } from './api-client';
import type { ApiHost } from './api-host';
import { expectProblem, EXECUTOR_CREDENTIALS, listProcesses, OPERATOR_TOKEN, startApiHost } from './api-host';

const ENV = 'auth-1';

/** The status an upgrade to `url` with `headers` gets (`open` when it is accepted). */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number | 'open'> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers, perMessageDeflate: false });
    socket.once('open', () => {
      socket.once('close', () => resolve('open'));
      socket.terminate();
    });
    socket.once('unexpected-response', (req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      req.destroy();
    });
    socket.once('error', reject);
  });
}

describe('operator API: who may call it', () => {
  let setup: ApiHost;
  let registration: Registration;
  let capabilityToken: string;
  /** Every answer the spec got, to search for tokens at the end. */
  const answers: ApiResponse[] = [];

  const expectUnauthorized = (response: ApiResponse, what: unknown): void => {
    answers.push(response);
    const detail = typeof response.body === 'object' && response.body !== null && 'detail' in response.body;
    expect({ what, status: response.status, authenticate: response.headers['www-authenticate'], detail }).toEqual({ what, status: 401, authenticate: 'Bearer', detail: false });
    expectProblem(response, 401, 'UNAUTHORIZED', setup.host.instanceId);
  };

  beforeAll(async () => {
    // Every refusal here is unauthenticated: lift that limit (spec/host/api/limits.int.spec.ts tests it).
    setup = await startApiHost({ environmentId: ENV, operator: { unauthenticatedPerSecond: 10_000, uiDir: join(__dirname, 'ui-fixture') } });
    registration = await registerOk(setup.host.url, 'auth-registered', EXECUTOR_CREDENTIALS);
    capabilityToken = new URL(registration.url).searchParams.get('token') ?? '';
    expect(capabilityToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('answers a missing, wrong or malformed token with 401, WWW-Authenticate: Bearer and no detail, on every route', async () => {
    const requests: [string, string, RequestOptions][] = [
      ['GET', paths.host, {}],
      ['GET', paths.environments, {}],
      ['GET', paths.environment(ENV), {}],
      ['GET', paths.overview, {}],
      ['GET', paths.processes(ENV), {}],
      ['POST', paths.processes(ENV), { json: { argv: ['true'] } }],
      ['GET', paths.events(ENV, '00000000-0000-4000-8000-000000000000'), {}],
      ['POST', paths.stdin(ENV, '00000000-0000-4000-8000-000000000000'), { json: { writeId: 'w', data: '' } }],
      // Unknown routes and methods are not revealed to a caller without a token.
      ['GET', `${API_PREFIX}/no-such-route`, {}],
      ['PUT', paths.host, {}],
    ];
    const authorizations: (string | undefined)[] = [
      undefined,
      'Bearer',
      'Bearer ',
      'Bearer wrong-token-long-enough-to-be-one',
      `Bearer ${OPERATOR_TOKEN}x`,
      `Bearer ${OPERATOR_TOKEN.slice(0, -1)}`,
      OPERATOR_TOKEN,
      `Token ${OPERATOR_TOKEN}`,
      `Basic ${Buffer.from(`operator:${OPERATOR_TOKEN}`).toString('base64')}`,
    ];
    for (const [method, path, options] of requests) {
      for (const authorization of authorizations) {
        const headers = authorization === undefined ? {} : { authorization };
        expectUnauthorized(await setup.api.request(method, path, { ...options, token: null, headers }), { method, path, authorization });
      }
    }
    // The scheme is case-insensitive; the token is not.
    expect((await setup.api.get(paths.host, { token: null, headers: { authorization: `bearer ${OPERATOR_TOKEN}` } })).status).toBe(200);
    // Any number of spaces may follow the scheme (RFC 9110 §11.4: auth-scheme 1*SP token68).
    expect((await setup.api.get(paths.host, { token: null, headers: { authorization: `Bearer   ${OPERATOR_TOKEN}` } })).status).toBe(200);
    expectUnauthorized(await setup.api.get(paths.host, { token: null, headers: { authorization: `Bearer ${OPERATOR_TOKEN.toUpperCase()}` } }), 'upper case');
  });

  it('answers its public rows without a token: the dashboard and the API reference under their CSPs (no-cache), the OpenAPI document (never cached), HEAD alike', async () => {
    const anonymous = setup.api.as(null);
    const served: Record<string, unknown> = {};
    for (const method of ['GET', 'HEAD']) {
      for (const path of ['/', `${API_PREFIX}/openapi.json`, `${API_PREFIX}/docs`]) {
        const answer = await anonymous.request(method, path);
        const { 'content-type': type, 'cache-control': cache, 'content-security-policy': policy } = answer.headers;
        served[`${method} ${path}`] = { status: answer.status, type, cache, policy, body: answer.text.length > 0 };
      }
    }
    expect(served).toEqual({
      'GET /': { status: 200, type: 'text/html; charset=utf-8', cache: 'no-cache', policy: DASHBOARD_CSP, body: true },
      [`GET ${API_PREFIX}/openapi.json`]: { status: 200, type: 'application/json', cache: 'no-store', policy: undefined, body: true },
      'HEAD /': { status: 200, type: 'text/html; charset=utf-8', cache: 'no-cache', policy: DASHBOARD_CSP, body: false },
      [`HEAD ${API_PREFIX}/openapi.json`]: { status: 200, type: 'application/json', cache: 'no-store', policy: undefined, body: false },
      [`GET ${API_PREFIX}/docs`]: { status: 200, type: 'text/html; charset=utf-8', cache: 'no-cache', policy: API_DOCS_CSP, body: true },
      [`HEAD ${API_PREFIX}/docs`]: { status: 200, type: 'text/html; charset=utf-8', cache: 'no-cache', policy: API_DOCS_CSP, body: false },
    });
    const refused = await anonymous.request('POST', '/', { json: {} });
    expectProblem(refused, 405, 'METHOD_NOT_ALLOWED', setup.host.instanceId);
    expect(refused.headers['allow']).toBe('GET, HEAD');
  });

  it('refuses executor credentials as operator tokens: the secret, the key id, a SigV4 signature, a capability token', async () => {
    const before = await listProcesses(setup.api, ENV);
    const start = { argv: ['true'] };
    const signed = (method: string, path: string, body?: string): Record<string, string> => {
      const headers = signedHeaders(method, `${setup.host.url}${path}`, EXECUTOR_CREDENTIALS, body);
      delete headers['host'];
      expect(headers['authorization']).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDAPISPEC\//);
      return headers;
    };
    const attempts: [string, Promise<ApiResponse>][] = [
      ['secret', setup.api.get(paths.environments, { token: EXECUTOR_CREDENTIALS.secretAccessKey })],
      ['secret, start', setup.api.post(paths.processes(ENV), start, { token: EXECUTOR_CREDENTIALS.secretAccessKey })],
      ['key id', setup.api.get(paths.environments, { token: EXECUTOR_CREDENTIALS.accessKeyId })],
      ['sigv4', setup.api.get(paths.environments, { token: null, headers: signed('GET', paths.environments) })],
      ['sigv4, start', setup.api.post(paths.processes(ENV), undefined, { token: null, body: JSON.stringify(start), headers: signed('POST', paths.processes(ENV), JSON.stringify(start)) })],
      ['capability token', setup.api.get(paths.environments, { token: capabilityToken })],
      ['capability token, start', setup.api.post(paths.processes(ENV), start, { token: capabilityToken })],
      ['capability token in the query', setup.api.get(`${paths.environments}?token=${capabilityToken}`, { token: null })],
    ];
    for (const [what, attempt] of attempts) expectUnauthorized(await attempt, what);
    expect(await listProcesses(setup.api, ENV)).toEqual(before);
  });

  it('refuses an operator token on the executor routes: registration and WebSocket upgrade answer 401, no environment is made', async () => {
    const registerPath = '/cloud/environment/operator-env/direct/register';
    const registered = await setup.api.post(registerPath, { transport: 'direct_jsonrpc_v1' });
    expect({ status: registered.status, body: registered.body }).toEqual({ status: 401, body: { error: 'unauthorized' } });
    const wsBase = setup.host.url.replace(/^http/, 'ws');
    const bearer = { authorization: `Bearer ${OPERATOR_TOKEN}` };
    expect(await upgradeStatus(registration.url, bearer)).toBe(401);
    expect(await upgradeStatus(`${wsBase}/cloud/environment/operator-env/direct/connect/reg-x?token=${capabilityToken}`, bearer)).toBe(401);
    expect(await upgradeStatus(`${wsBase}${paths.overview}`, bearer)).toBe(401);
    expect(setup.host.environment('operator-env')).toBeUndefined();
    expect(setup.host.environment('auth-registered')).toBeUndefined();
    const listed = (await setup.api.get(paths.environments)).body as { environments: { id: string }[] };
    expect(listed.environments.map((e) => e.id)).toEqual([ENV]);
  });

  it('never put a token or a credential in an answer or the log', () => {
    const all = [...answers.map((a) => `${JSON.stringify(a.headers)}\n${a.text}`), ...setup.log].join('\n');
    expect(answers.length).toBeGreaterThan(90);
    for (const secret of [OPERATOR_TOKEN, EXECUTOR_CREDENTIALS.secretAccessKey, capabilityToken]) expect(all).not.toContain(secret);
    expect(setup.log.join('\n')).toContain('refused (401');
  });
});
