import * as E from 'fp-ts/lib/Either';
import { decodeWith } from '../../src/wire/decode';
import { NetworkPolicyDecisionNotification, NetworkPolicyRequestParams, NetworkPolicyRequestResponse } from '../../src/wire/network';

describe('network codecs', () => {
  it('keeps extra fields of the requested connection', () => {
    const params = { processId: 'p', request: { protocol: 'http', host: 'example.com', port: 80, method: 'GET' } };
    expect(decodeWith(NetworkPolicyRequestParams)(params)).toEqual(E.right(params));
  });

  it('rejects a request without a port', () => {
    expect(E.isLeft(decodeWith(NetworkPolicyRequestParams)({ processId: 'p', request: { protocol: 'http', host: 'example.com' } }))).toBe(true);
  });

  it('requires a reason on deny and ask', () => {
    expect(decodeWith(NetworkPolicyRequestResponse)({ decision: { type: 'deny', reason: 'not_allowed' } })).toEqual(
      E.right({ decision: { type: 'deny', reason: 'not_allowed' } }),
    );
    expect(E.isLeft(decodeWith(NetworkPolicyRequestResponse)({ decision: { type: 'ask' } }))).toBe(true);
  });

  it('accepts any audit event that names its process', () => {
    expect(decodeWith(NetworkPolicyDecisionNotification)({ processId: 'p', future: true })).toEqual(E.right({ processId: 'p', future: true }));
    expect(E.isLeft(decodeWith(NetworkPolicyDecisionNotification)({ future: true }))).toBe(true);
  });
});
