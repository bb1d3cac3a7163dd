import * as E from 'fp-ts/lib/Either';
import { DecodeError } from '../../src/errors';
import { decodeWith } from '../../src/wire/decode';
import { HttpBodyDeltaNotification, HttpRequestParams, HttpRequestResponse } from '../../src/wire/http';

describe('http codecs', () => {
  it('encodes a request body as base64 and keeps the optional fields', () => {
    const params: HttpRequestParams = {
      method: 'POST',
      url: 'http://127.0.0.1:8080/x',
      requestId: 'r1',
      headers: [{ name: 'authorization', value: 'Bearer ', valueEnvVar: 'TOKEN' }],
      bodyBase64: Buffer.from('part1-part2'),
      timeoutMs: null,
      redirectPolicy: 'stop',
      streamResponse: true,
    };
    expect(HttpRequestParams.encode(params)).toEqual({ ...params, bodyBase64: 'cGFydDEtcGFydDI=' });
  });

  it('decodes a buffered response body to bytes', () => {
    const wire = { status: 200, headers: [{ name: 'content-type', value: 'text/plain' }], bodyBase64: 'cGFydDEtcGFydDI=' };
    expect(decodeWith(HttpRequestResponse)(wire)).toEqual(E.right({ ...wire, bodyBase64: Buffer.from('part1-part2') }));
  });

  it('decodes a failed final body delta', () => {
    const wire = { requestId: 'r2', seq: 2, deltaBase64: '', done: false, error: 'connection reset' };
    expect(decodeWith(HttpBodyDeltaNotification)(wire)).toEqual(E.right({ ...wire, deltaBase64: Buffer.alloc(0) }));
  });

  it('rejects a delta whose body is not base64, naming the path', () => {
    expect(decodeWith(HttpBodyDeltaNotification)({ requestId: 'r2', seq: 1, deltaBase64: 'cGFydDEt!', done: false, error: null })).toEqual(
      E.left(new DecodeError('HttpBodyDeltaNotification', ['Invalid value "cGFydDEt!" supplied to : HttpBodyDeltaNotification/deltaBase64: Base64Bytes'])),
    );
  });
});
