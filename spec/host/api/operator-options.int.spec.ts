/**
 * The operator API's options, on a real host on loopback (no executor needed): an option out of range
 * stops the host from starting, with a RangeError naming it, instead of a 500 on every request later; a
 * low unauthenticated rate (below one request in two seconds) is a valid setting, not a crash.
 */
import type { OperatorApiOptions } from '../../../src/host/api/operator-api';
import { OperatorTokens } from '../../../src/host/api/operator-tokens';
import { startHostServer } from '../../../src/host/host-server';
import { trackForCleanup } from '../../support/executor';
import { ApiClient, paths } from './api-client';
import { EXECUTOR_CREDENTIALS, OPERATOR_TOKEN } from './api-host';

const credentials = new Map([[EXECUTOR_CREDENTIALS.accessKeyId, EXECUTOR_CREDENTIALS.secretAccessKey]]);
const start = (operator: Partial<Omit<OperatorApiOptions, 'tokens'>>): ReturnType<typeof startHostServer> =>
  startHostServer({ credentials, operator: { tokens: new OperatorTokens([OPERATOR_TOKEN]), ...operator } });

describe('operator API options', () => {
  it('refuses to start with an option out of range, naming it, and leaves nothing listening', async () => {
    const bad: readonly [string, Partial<Omit<OperatorApiOptions, 'tokens'>>][] = [
      ['requestsPerSecond', { requestsPerSecond: 0 }],
      ['requestsPerSecond', { requestsPerSecond: Number.NaN }],
      ['requestBurst', { requestBurst: 0.5 }],
      ['unauthenticatedPerSecond', { unauthenticatedPerSecond: -1 }],
      ['stallMs', { stallMs: Number.POSITIVE_INFINITY }],
      ['maxBodyBytes', { maxBodyBytes: 0 }],
      ['sse.bufferBytes', { sse: { bufferBytes: 1.5 } }],
      ['sse.perToken', { sse: { perToken: 0 } }],
      ['sse.total', { sse: { total: -3 } }],
      ['sse.pingMs', { sse: { pingMs: 0 } }],
    ];
    const outcomes: string[] = [];
    for (const [name, options] of bad) {
      outcomes.push(
        await start(options).then(
          (host) => {
            trackForCleanup(host);
            return `${name}: started`;
          },
          (error: unknown) => `${name}: ${error instanceof RangeError ? 'RangeError' : String(error)} ${error instanceof Error && error.message.startsWith(`operator option ${name} `) ? 'naming it' : `(${String(error)})`}`,
        ),
      );
    }
    expect(outcomes).toEqual(bad.map(([name]) => `${name}: RangeError naming it`));
  });

  it('takes an unauthenticated rate below one request in two seconds: one 401, then 429 with Retry-After', async () => {
    const host = trackForCleanup(await start({ unauthenticatedPerSecond: 0.1 }));
    const anonymous = new ApiClient(host.url, null);
    const first = await anonymous.get(paths.environments);
    const second = await anonymous.get(paths.environments);
    expect({ first: first.status, second: second.status, retryAfter: second.headers['retry-after'] }).toEqual({ first: 401, second: 429, retryAfter: '10' });
    expect((await anonymous.as(OPERATOR_TOKEN).get(paths.environments)).status).toBe(200);
  });
});
