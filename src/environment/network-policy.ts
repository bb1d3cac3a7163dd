import * as E from 'fp-ts/lib/Either';
import type { ServerRequestHandler, ServerRequestOutcome } from '../rpc/server-requests';
import { decodeWith } from '../wire/decode';
import { ErrorCodes } from '../wire/jsonrpc';
import { NetworkPolicyRequestParams } from '../wire/network';
import type { NetworkPolicyDecision } from '../wire/network';

/** The request a decider sees: which process wants to reach what. @interface */
export type NetworkPolicyRequest = NetworkPolicyRequestParams;

/** Decides an executor's `network/policyRequest` (allow, deny or ask, with a reason ≤ 1024 bytes). */
export type NetworkPolicyDecider = (request: NetworkPolicyRequest) => Promise<NetworkPolicyDecision> | NetworkPolicyDecision;

const decodeRequest = decodeWith(NetworkPolicyRequestParams);
const deny = (reason: string): ServerRequestOutcome => ({ result: { decision: { type: 'deny', reason } } });

/**
 * Answers `network/policyRequest` with the decider's decision: deny (`not_allowed`) when no decider is
 * configured, the params are malformed or the host is invalid, or the decider throws. Every other
 * server request method gets -32601 (the RpcConnection's default).
 */
export function networkPolicyHandler(decider: NetworkPolicyDecider | undefined): ServerRequestHandler {
  return (method, params) => {
    if (method !== 'network/policyRequest') return undefined;
    const request = decodeRequest(params);
    if (E.isLeft(request)) return Promise.resolve({ error: { code: ErrorCodes.InvalidParams, message: request.left.message } });
    if (decider === undefined || !validHost(request.right.request.host)) return Promise.resolve(deny('not_allowed'));
    return Promise.resolve()
      .then(() => decider(request.right))
      .then(
        (decision): ServerRequestOutcome => ({ result: { decision } }),
        () => deny('not_allowed'),
      );
  };
}

// codex: empty, longer than 253 bytes, or containing whitespace or control characters.
 
const validHost = (host: string): boolean => host.length > 0 && Buffer.byteLength(host) <= 253 && !/[\s\u0000-\u001f\u007f]/.test(host);
