import * as E from 'fp-ts/lib/Either';
import type { ExecClientErrorCode } from '../../src/errors';
import { decodeWith } from '../../src/wire/decode';
import { ErrorCode } from '../../src/wire/error-code';
import { FailedEventData, Problem } from '../../src/wire/operator-api';

describe('ErrorCode', () => {
  const decode = decodeWith(ErrorCode);

  it('decodes the codes of the closed set, the library’s and the operator API’s', () => {
    const codes: readonly ExecClientErrorCode[] = ['DECODE_FAILED', 'RESUME_FAILED', 'CONFIG_INVALID', 'PROCESS_GONE', 'HOST_UNREACHABLE'];
    for (const code of codes) expect(decode(code)).toEqual(E.right(code));
  });

  it('refuses any other value, naming the codec', () => {
    for (const value of ['NOT_A_CODE', 'decode_failed', '', 7, null, undefined]) {
      const result = decode(value);
      expect(E.isLeft(result) && { code: result.left.code, what: result.left.what }).toEqual({ code: 'DECODE_FAILED', what: 'ErrorCode' });
    }
  });

  it('is the code of a problem and of a failed event', () => {
    const problem = { type: 'about:blank', title: 'Not Found', status: 404, code: 'PROCESS_NOT_FOUND', hostInstance: 'h' };
    expect(decodeWith(Problem)(problem)).toEqual(E.right(problem));
    expect(E.isLeft(decodeWith(Problem)({ ...problem, code: 'NOT_A_CODE' }))).toBe(true);
    expect(decodeWith(FailedEventData)({ code: 'PROCESS_FAILED', message: 'm' })).toEqual(E.right({ code: 'PROCESS_FAILED', message: 'm' }));
    expect(E.isLeft(decodeWith(FailedEventData)({ code: 'NOT_A_CODE', message: 'm' }))).toBe(true);
  });
});
