/** Where a preview request goes (issue 42): the path form, the host-name form, and the checks of the preview domain. */
import { ConfigError } from '../../../../src/errors';
import { ApiProblem } from '../../../../src/host/api/problem';
import { checkPreviewDomain, hostFormAddress, hostFormName, pathFormAddress } from '../../../../src/host/api/preview/preview-address';

const DOMAIN = 'preview.example';

/** What `run` threw, as status and code; fails the spec when it threw nothing or something else. */
const problemOf = (run: () => unknown): { status: number; code: string } => {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiProblem) return { status: error.status, code: error.code };
    throw error;
  }
  throw new Error('expected an ApiProblem, nothing was thrown');
};

describe('pathFormAddress', () => {
  it('reads /{environmentId}/{port}/rest with its query, and the prefix the app is served under', () => {
    expect(pathFormAddress('/env-1/3000/static/app.js?v=2')).toEqual({ form: 'path', environmentId: 'env-1', port: 3000, rest: '/static/app.js?v=2', prefix: '/env-1/3000' });
    expect(pathFormAddress('/env-1/3000/')).toEqual({ form: 'path', environmentId: 'env-1', port: 3000, rest: '/', prefix: '/env-1/3000' });
    expect(pathFormAddress('/env-1/1/')).toMatchObject({ port: 1 });
    expect(pathFormAddress('/env-1/65535/')).toMatchObject({ port: 65_535 });
  });

  it("answers 'slash' for /{environmentId}/{port} without its trailing slash, with or without a query", () => {
    expect(pathFormAddress('/env-1/3000')).toBe('slash');
    expect(pathFormAddress('/env-1/3000?x=1')).toBe('slash');
  });

  it('answers undefined for a target that is not a preview path', () => {
    expect(pathFormAddress('/')).toBeUndefined();
    expect(pathFormAddress('/favicon.ico')).toBeUndefined();
    expect(pathFormAddress('/env-1?x=1')).toBeUndefined();
  });

  it('percent-decodes the environment id, and encodes it again in the prefix', () => {
    expect(pathFormAddress('/env%2D1/3000/a')).toEqual({ form: 'path', environmentId: 'env-1', port: 3000, rest: '/a', prefix: '/env-1/3000' });
    expect(pathFormAddress('/e.v_1/8080/')).toMatchObject({ environmentId: 'e.v_1', prefix: '/e.v_1/8080' });
  });

  it.each([
    ['a broken percent-encoding', '/bad%zz/3000/'],
    ['a space', '/a%20b/3000/'],
    ['a leading hyphen', '/-env/3000/'],
    ['129 characters', `/${'e'.repeat(129)}/3000/`],
  ])('refuses an environment id with %s with 400 INVALID_ID', (_what, target) => {
    expect(problemOf(() => pathFormAddress(target))).toEqual({ status: 400, code: 'INVALID_ID' });
  });

  it.each([['0'], ['65536'], ['03000'], ['http'], ['-1'], ['123456']])('refuses port %s with 400 INVALID_ID', (port) => {
    expect(problemOf(() => pathFormAddress(`/env-1/${port}/`))).toEqual({ status: 400, code: 'INVALID_ID' });
    expect(problemOf(() => pathFormAddress(`/env-1/${port}`))).toEqual({ status: 400, code: 'INVALID_ID' });
  });
});

describe('hostFormAddress', () => {
  it('reads {port}-{environmentId}.DOMAIN, the whole target the app\'s own', () => {
    expect(hostFormAddress(`3000-env.${DOMAIN}`, DOMAIN, '/static/app.js?v=2')).toEqual({ form: 'host', environmentId: 'env', port: 3000, rest: '/static/app.js?v=2', prefix: '' });
    expect(hostFormAddress(`8080-my-env-2.${DOMAIN}`, DOMAIN, '/')).toMatchObject({ environmentId: 'my-env-2', port: 8080 });
    expect(hostFormAddress(`65535-env.${DOMAIN}`, DOMAIN, '/')).toMatchObject({ port: 65_535 });
  });

  it("takes the Host's port, upper case (lower-cased) and a trailing dot", () => {
    const expected = { form: 'host', environmentId: 'env', port: 3000, rest: '/', prefix: '' };
    expect(hostFormAddress(`3000-env.${DOMAIN}:8443`, DOMAIN, '/')).toEqual(expected);
    expect(hostFormAddress('3000-ENV.Preview.Example', DOMAIN, '/')).toEqual(expected);
    expect(hostFormAddress(`3000-env.${DOMAIN}.`, DOMAIN, '/')).toEqual(expected);
    expect(hostFormAddress(`3000-env.${DOMAIN}.:80`, DOMAIN, '/')).toEqual(expected);
  });

  it('answers undefined for a name not under the domain (the domain itself, a look-alike, an address)', () => {
    expect(hostFormAddress('host.example', DOMAIN, '/')).toBeUndefined();
    expect(hostFormAddress(DOMAIN, DOMAIN, '/')).toBeUndefined();
    expect(hostFormAddress(`3000-env.x${DOMAIN}`, DOMAIN, '/')).toBeUndefined();
    expect(hostFormAddress('127.0.0.1:8080', DOMAIN, '/')).toBeUndefined();
    expect(hostFormAddress('[::1]:8080', DOMAIN, '/')).toBeUndefined();
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['a space', 'a b.preview.example'],
    ['a path', '3000-env.preview.example/x'],
    ['credentials', 'user@3000-env.preview.example'],
    ['a port that is not a number', '3000-env.preview.example:http'],
    ['a port of six digits', '3000-env.preview.example:123456'],
  ])('refuses a malformed Host (%s) with 400 INVALID_HOST', (_what, host) => {
    expect(problemOf(() => hostFormAddress(host, DOMAIN, '/'))).toEqual({ status: 400, code: 'INVALID_HOST' });
  });

  it.each([
    ['two labels deep', `x.3000-env.${DOMAIN}`],
    ['no port', `env.${DOMAIN}`],
    ['port 0', `0-env.${DOMAIN}`],
    ['port 65536', `65536-env.${DOMAIN}`],
    ['a leading zero', `03000-env.${DOMAIN}`],
    ['a trailing hyphen', `3000-env-.${DOMAIN}`],
    ['no environment id', `3000-.${DOMAIN}`],
    ['a label of 64 characters', `3000-${'e'.repeat(59)}.${DOMAIN}`],
  ])('refuses a name under the domain with %s with 400 INVALID_HOST', (_what, host) => {
    expect(problemOf(() => hostFormAddress(host, DOMAIN, '/'))).toEqual({ status: 400, code: 'INVALID_HOST' });
  });

  it('takes a label of 63 characters, the most a DNS label holds', () => {
    const id = 'e'.repeat(58);
    expect(hostFormAddress(`3000-${id}.${DOMAIN}`, DOMAIN, '/')).toMatchObject({ environmentId: id, port: 3000 });
  });
});

describe('hostFormName', () => {
  it('names the preview {port}-{environmentId}.DOMAIN, and reads back to the same address', () => {
    const name = hostFormName('env-1', 3000, DOMAIN);
    expect(name).toBe(`3000-env-1.${DOMAIN}`);
    expect(hostFormAddress(name, DOMAIN, '/')).toMatchObject({ environmentId: 'env-1', port: 3000 });
    expect(hostFormName('e'.repeat(58), 3000, DOMAIN)).toBe(`3000-${'e'.repeat(58)}.${DOMAIN}`);
  });

  it.each([
    ["a '.'", 'env.1'],
    ["a '_'", 'env_1'],
    ['upper case', 'Env'],
    ['a trailing hyphen', 'env-'],
    ['a label of 64 characters with its port', 'e'.repeat(59)],
  ])('has none for an id with %s (not a DNS label)', (_what, id) => {
    expect(hostFormName(id, 3000, DOMAIN)).toBeUndefined();
  });
});

describe('checkPreviewDomain', () => {
  it('accepts a domain of its own, a child of the host name too, lower-cased and without its trailing dot', () => {
    expect(checkPreviewDomain('Preview.Example.', ['host.example'])).toBe('preview.example');
    expect(checkPreviewDomain('preview.host.example', ['host.example', '127.0.0.1'])).toBe('preview.host.example');
    expect(checkPreviewDomain('preview.localhost', [])).toBe('preview.localhost');
  });

  it("refuses the host's own name and a parent of it, whatever their case or trailing dot", () => {
    expect(() => checkPreviewDomain('host.example', ['host.example'])).toThrow(ConfigError);
    expect(() => checkPreviewDomain('Host.Example', ['host.example.'])).toThrow(/the host's own name or a parent of it \(host\.example\.\)/);
    expect(() => checkPreviewDomain('example.com', ['127.0.0.1', 'API.Example.com'])).toThrow(/a parent of it \(API\.Example\.com\)/);
  });

  it.each([
    ['a single label', 'localhost'],
    ['a leading hyphen', '-bad.example'],
    ['a trailing hyphen', 'bad-.example'],
    ["a '_'", 'under_score.example'],
    ['an empty label', 'a..example'],
    ['a label of 64 characters', `${'a'.repeat(64)}.example`],
    ['a wildcard', '*.example'],
    ['nothing', ''],
  ])('refuses a domain with %s with a ConfigError', (_what, domain) => {
    expect(() => checkPreviewDomain(domain, ['host.example'])).toThrow(ConfigError);
    expect(() => checkPreviewDomain(domain, ['host.example'])).toThrow(/is not a domain of two or more DNS labels/);
  });
});
