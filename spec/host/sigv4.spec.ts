import { RequestSigner, sign } from 'aws4';
import type { IncomingHttpHeaders } from 'node:http';
import { constantTimeEqual, parseAmzDate, parseAuthorization, verifySigV4 } from '../../src/host/sigv4';
import type { SigV4Policy, SignedRequest } from '../../src/host/sigv4';
import { VirtualClock } from '../support/virtual-time';

const KEY = { accessKeyId: 'AKIDSPEC', secretAccessKey: 'spec-secret-value' };
const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const policy: SigV4Policy = { keys: new Map([[KEY.accessKeyId, KEY.secretAccessKey]]), region: 'us-east-1', service: 'execute-api', maxClockSkewMs: 300_000, scheduler: new VirtualClock(NOW) };
const amz = (ms: number): string => new Date(ms).toISOString().replace(/[:-]|\.\d{3}/g, '');

/** A request signed as the executor signs its registration (content-type;host;x-amz-date, body hashed). */
function signedPost(overrides: { secret?: string; at?: number; region?: string; path?: string; body?: string } = {}): SignedRequest {
  const body = overrides.body ?? '{"transport":"direct_jsonrpc_v1"}';
  const path = overrides.path ?? '/cloud/environment/env-1/direct/register';
  const signed = sign(
    { host: '127.0.0.1:4000', path, method: 'POST', body, service: 'execute-api', region: overrides.region ?? 'us-east-1', headers: { 'content-type': 'application/json', 'X-Amz-Date': amz(overrides.at ?? NOW) }, doNotModifyHeaders: false },
    { accessKeyId: KEY.accessKeyId, secretAccessKey: overrides.secret ?? KEY.secretAccessKey },
  );
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(signed.headers ?? {})) headers[name.toLowerCase()] = String(value);
  return { method: 'POST', path, headers, body };
}

describe('verifySigV4', () => {
  it('accepts a request signed with an accepted key and names the key and when it was signed', () => {
    expect(verifySigV4(signedPost(), policy)).toEqual({ ok: true, accessKeyId: KEY.accessKeyId, signedAt: NOW });
    expect(verifySigV4(signedPost({ at: NOW - 61_000 }), policy)).toEqual({ ok: true, accessKeyId: KEY.accessKeyId, signedAt: NOW - 61_000 });
  });

  it('accepts the exact headers the 0.171.0 executor sent for its upgrade (host;x-amz-date, empty body)', () => {
    const upgrade = sign({ host: '127.0.0.1:4000', path: '/c/reg-1?token=abc-_DEF', method: 'GET', service: 'execute-api', region: 'us-east-1', headers: { 'X-Amz-Date': amz(NOW) } }, KEY);
    const headers: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(upgrade.headers ?? {})) headers[name.toLowerCase()] = String(value);
    expect(headers['authorization']).toContain('SignedHeaders=host;x-amz-date,');
    expect(verifySigV4({ method: 'GET', path: '/c/reg-1?token=abc-_DEF', headers, body: '' }, policy).ok).toBe(true);
  });

  it.each([
    ['a wrong secret', signedPost({ secret: 'not-the-secret' }), 'mismatch'],
    ['a stale x-amz-date', signedPost({ at: NOW - 301_000 }), 'stale'],
    ['an x-amz-date from the future', signedPost({ at: NOW + 301_000 }), 'stale'],
    ['another region', signedPost({ region: 'eu-west-1' }), 'scope'],
  ])('refuses %s', (_what, request, reason) => {
    expect(verifySigV4(request, policy)).toEqual({ ok: false, reason });
  });

  it('refuses a request without an Authorization header, or with a mangled one', () => {
    const request = signedPost();
    const { authorization, ...rest } = request.headers;
    expect(verifySigV4({ ...request, headers: rest }, policy)).toEqual({ ok: false, reason: 'missing' });
    expect(verifySigV4({ ...request, headers: { ...rest, authorization: 'Bearer abc' } }, policy)).toEqual({ ok: false, reason: 'malformed' });
    expect(authorization).toBeDefined();
  });

  it('refuses an unknown key id after computing a signature all the same', () => {
    // The constant work is observed: aws4 computes exactly one signature for an unknown key, as for a
    // known key with a wrong signature, so the answer's timing does not tell known key ids apart.
    const request = signedPost();
    const wronglySigned = signedPost({ secret: 'not-the-secret' });
    const other: SigV4Policy = { ...policy, keys: new Map([['AKIDOTHER', 'x']]) };
    const computed = jest.spyOn(RequestSigner.prototype, 'signature');
    try {
      expect(verifySigV4(request, other)).toEqual({ ok: false, reason: 'unknown-key' });
      const forUnknownKey = computed.mock.calls.length;
      computed.mockClear();
      expect(verifySigV4(wronglySigned, policy)).toEqual({ ok: false, reason: 'mismatch' });
      expect(forUnknownKey).toBe(1);
      expect(computed).toHaveBeenCalledTimes(forUnknownKey);
    } finally {
      computed.mockRestore();
    }
  });

  it('refuses a tampered body, path, query or signed header', () => {
    const request = signedPost();
    expect(verifySigV4({ ...request, body: '{"transport":"other"}' }, policy)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySigV4({ ...request, path: '/cloud/environment/env-2/direct/register' }, policy)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySigV4({ ...request, path: `${request.path}?token=x` }, policy)).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifySigV4({ ...request, headers: { ...request.headers, host: 'evil:4000' } }, policy)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuses a signature that does not cover host and x-amz-date, or an x-amz-date outside its scope date', () => {
    const request = signedPost();
    const auth = String(request.headers['authorization']);
    expect(verifySigV4({ ...request, headers: { ...request.headers, authorization: auth.replace('content-type;host;x-amz-date', 'content-type;x-amz-date') } }, policy).ok).toBe(false);
    const otherDay = amz(NOW - 86_400_000 + 60_000);
    expect(verifySigV4({ ...request, headers: { ...request.headers, 'x-amz-date': otherDay } }, { ...policy, maxClockSkewMs: 2 * 86_400_000 })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('holds x-amz-date against its scheduler\'s clock: the same signature goes stale as that clock moves on', async () => {
    const clock = new VirtualClock(NOW);
    const request = signedPost();
    expect(verifySigV4(request, { ...policy, scheduler: clock }).ok).toBe(true);
    await clock.advance(300_000);
    expect(verifySigV4(request, { ...policy, scheduler: clock }).ok).toBe(true);
    await clock.advance(1_000);
    expect(verifySigV4(request, { ...policy, scheduler: clock })).toEqual({ ok: false, reason: 'stale' });
  });

  it('treats a path aws4 cannot canonicalise as malformed instead of throwing', () => {
    const request = signedPost();
    expect(verifySigV4({ ...request, path: '/cloud/environment/a b%E0%A4%A/direct/register' }, policy)).toEqual({ ok: false, reason: 'malformed' });
  });
});

describe('sigv4 helpers', () => {
  it('parses the Authorization header the executor sends', () => {
    const header = 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261130/us-east-1/execute-api/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=' + 'a'.repeat(64);
    expect(parseAuthorization(header)).toEqual({ accessKeyId: 'AKIDEXAMPLE', date: '20261130', region: 'us-east-1', service: 'execute-api', signedHeaders: ['content-type', 'host', 'x-amz-date'], signature: 'a'.repeat(64) });
    expect(parseAuthorization(header.replace('Signature=', 'Signature=zz'))).toBeUndefined();
  });

  it('parses x-amz-date and compares in constant time', () => {
    expect(parseAmzDate('20261130T120000Z')).toBe(NOW);
    expect(parseAmzDate('2026-11-30')).toBeUndefined();
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });
});
