import { networkPolicyHandler } from '../../src/environment/network-policy';

const request = (host: string): unknown => ({ processId: 'p', request: { protocol: 'https_connect', host, port: 443 } });

describe('networkPolicyHandler', () => {
  it('denies by default with not_allowed', async () => {
    await expect(networkPolicyHandler(undefined)('network/policyRequest', request('example.com'))).resolves.toEqual({ result: { decision: { type: 'deny', reason: 'not_allowed' } } });
  });

  it("answers with the decider's decision", async () => {
    const handler = networkPolicyHandler((r) => (r.request.host === 'example.com' ? { type: 'allow' } : { type: 'ask', reason: 'unknown host' }));
    await expect(handler('network/policyRequest', request('example.com'))).resolves.toEqual({ result: { decision: { type: 'allow' } } });
    await expect(handler('network/policyRequest', request('other.org'))).resolves.toEqual({ result: { decision: { type: 'ask', reason: 'unknown host' } } });
  });

  it('denies an invalid host or a decider that throws, without asking it', async () => {
    const decider = jest.fn(() => {
      throw new Error('boom');
    });
    const handler = networkPolicyHandler(decider);
    await expect(handler('network/policyRequest', request('bad host'))).resolves.toEqual({ result: { decision: { type: 'deny', reason: 'not_allowed' } } });
    expect(decider).not.toHaveBeenCalled();
    await expect(handler('network/policyRequest', request('example.com'))).resolves.toEqual({ result: { decision: { type: 'deny', reason: 'not_allowed' } } });
  });

  it('answers malformed params with -32602 and leaves other methods to the -32601 default', async () => {
    const handler = networkPolicyHandler(undefined);
    await expect(handler('network/policyRequest', { processId: 1 })).resolves.toMatchObject({ error: { code: -32602 } });
    expect(handler('other/method', {})).toBeUndefined();
  });
});
