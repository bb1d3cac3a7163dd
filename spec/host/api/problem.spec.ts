/**
 * What the operator API answers for an error that reached it (issue 38): what passes with replicas (a write
 * refused as stale, a shared store that does not answer, a log Redis could not give for now) is a 503 with
 * `Retry-After`, which a client retries; a store script that gave nothing usable is a 502 (not retried: it
 * would give the same); a damaged log or a bug stays a 500.
 */
import { OutputLogReadError, StaleClaimError, StaleEpochError, StoreScriptError, StoreUnavailableError } from '../../../src/errors';
import { problemOf } from '../../../src/host/api/problem';

const answer = (error: unknown): { status: number; code: string; retryAfter: string | undefined } => {
  const problem = problemOf(error);
  return { status: problem.status, code: problem.code, retryAfter: problem.headers['retry-after'] };
};

describe('problemOf', () => {
  it('answers what passes with replicas 503 with Retry-After', () => {
    expect(answer(new StaleEpochError('env-1', 1, 2))).toEqual({ status: 503, code: 'STALE_EPOCH', retryAfter: '1' });
    expect(answer(new StaleClaimError('env-1', 1_000, 2_000, 2))).toEqual({ status: 503, code: 'STALE_CLAIM', retryAfter: '1' });
    expect(answer(new StoreUnavailableError('Connection is closed.'))).toEqual({ status: 503, code: 'STORE_UNAVAILABLE', retryAfter: '1' });
    expect(answer(new OutputLogReadError('p-1', 'EUNREACHABLE'))).toEqual({ status: 503, code: 'LOG_READ_FAILED', retryAfter: '1' });
    expect(answer(new OutputLogReadError('p-1', 'ETIMEDOUT'))).toEqual({ status: 503, code: 'LOG_READ_FAILED', retryAfter: '1' });
  });

  it('answers a store script that gave nothing usable 502 STORE_SCRIPT_FAILED, without Retry-After', () => {
    expect(answer(new StoreScriptError('execRxLogMeta', 'reply', 'a string where 2 integers were expected'))).toEqual({ status: 502, code: 'STORE_SCRIPT_FAILED', retryAfter: undefined });
  });

  it('answers a log that cannot be read for good, and anything unknown, 500', () => {
    expect(answer(new OutputLogReadError('p-1', 'EIO'))).toEqual({ status: 500, code: 'LOG_READ_FAILED', retryAfter: undefined });
    expect(answer(new Error('a bug'))).toEqual({ status: 500, code: 'HOST_ERROR', retryAfter: undefined });
  });
});
