/** The options of HTTP through the environment (issue 42): their defaults and their bounds. */
import { ApiProblem } from '../../../../src/host/api/problem';
import { disabled, httpSettings, MAX_HTTP_BODY_BYTES } from '../../../../src/host/api/preview/http-settings';

const MiB = 1024 * 1024;

describe('httpSettings', () => {
  it('is off by default, with the documented bounds', () => {
    expect(httpSettings(undefined)).toEqual({
      enabled: false,
      allow: [],
      previewDomain: undefined,
      maxBodyBytes: 10 * MiB,
      timeoutMs: 60_000,
      streamTimeoutMs: 600_000,
      linkTtlMs: 3_600_000,
      streamsPerEnvironment: 16,
      bufferBytes: 8 * MiB,
      requestsInFlight: 2,
      publicRate: 10,
    });
    expect(httpSettings({})).toEqual(httpSettings(undefined));
  });

  it('takes each option given, up to its bound', () => {
    const settings = httpSettings({ enabled: true, allow: ['10.0.0.0/8'], previewDomain: 'preview.example', maxBodyBytes: MAX_HTTP_BODY_BYTES, linkTtlMs: 86_400_000, publicRate: 0.5, timeoutMs: 1 });
    expect(settings).toMatchObject({ enabled: true, allow: ['10.0.0.0/8'], previewDomain: 'preview.example', maxBodyBytes: 11 * MiB, linkTtlMs: 86_400_000, publicRate: 0.5, timeoutMs: 1 });
  });

  it.each([
    ['maxBodyBytes above 11 MiB', { maxBodyBytes: 11 * MiB + 1 }, /maxBodyBytes must be a whole number from 1 to 11534336 \(got 11534337\)/],
    ['maxBodyBytes 0', { maxBodyBytes: 0 }, /maxBodyBytes must be a whole number from 1/],
    ['maxBodyBytes not whole', { maxBodyBytes: 1.5 }, /maxBodyBytes must be a whole number/],
    ['linkTtlMs over a day', { linkTtlMs: 86_400_001 }, /linkTtlMs must be a whole number from 1 to 86400000/],
    ['timeoutMs 0', { timeoutMs: 0 }, /timeoutMs must be a whole number/],
    ['streamTimeoutMs NaN', { streamTimeoutMs: Number.NaN }, /streamTimeoutMs must be a whole number/],
    ['streamsPerEnvironment 0', { streamsPerEnvironment: 0 }, /streamsPerEnvironment must be a whole number/],
    ['bufferBytes -1', { bufferBytes: -1 }, /bufferBytes must be a whole number/],
    ['requestsInFlight 0', { requestsInFlight: 0 }, /requestsInFlight must be a whole number/],
    ['publicRate 0', { publicRate: 0 }, /publicRate must be a number > 0 \(got 0\)/],
    ['publicRate Infinity', { publicRate: Number.POSITIVE_INFINITY }, /publicRate must be a number > 0/],
  ])('refuses %s with a RangeError naming it', (_what, options, message) => {
    expect(() => httpSettings(options)).toThrow(RangeError);
    expect(() => httpSettings(options)).toThrow(message);
  });

  it('answers a host without --allow-http 403 HTTP_DISABLED, naming the flag', () => {
    const problem = disabled();
    expect(problem).toBeInstanceOf(ApiProblem);
    expect({ status: problem.status, code: problem.code }).toEqual({ status: 403, code: 'HTTP_DISABLED' });
    expect(problem.detail).toMatch(/--allow-http/);
  });
});
