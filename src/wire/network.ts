import * as t from 'io-ts';
import { Integer } from './integer';
import { struct } from './struct';

// docs/protocol.md#server-requests; known from codex's source only. Both only happen for processes
// started with a `networkProxy`.

/** The connection a proxied process wants to open: `protocol` is `http`, `https_connect`, `socks5_tcp` or `socks5_udp`. */
export const NetworkPolicyRequestTarget = t.intersection(
  [t.type({ protocol: t.string, host: t.string, port: Integer }), t.UnknownRecord],
  'NetworkPolicyRequestTarget',
);
/** The connection a proxied process wants to open. */
export type NetworkPolicyRequestTarget = t.TypeOf<typeof NetworkPolicyRequestTarget>;

/** `network/policyRequest` params (a server→client request): may `processId` open `request`? */
export const NetworkPolicyRequestParams = struct('NetworkPolicyRequestParams', { processId: t.string, request: NetworkPolicyRequestTarget });
/** `network/policyRequest` params. */
export type NetworkPolicyRequestParams = t.TypeOf<typeof NetworkPolicyRequestParams>;

/** Our answer: allow, or deny/ask with a `reason` (≤ 1024 bytes, no control characters; codex denies with `not_allowed`). */
export const NetworkPolicyDecision = t.union(
  [
    struct('Allow', { type: t.literal('allow') }),
    struct('Deny', { type: t.literal('deny'), reason: t.string }),
    struct('Ask', { type: t.literal('ask'), reason: t.string }),
  ],
  'NetworkPolicyDecision',
);
/** Our answer to a `network/policyRequest`. */
export type NetworkPolicyDecision = t.TypeOf<typeof NetworkPolicyDecision>;

/** `network/policyRequest` result. */
export const NetworkPolicyRequestResponse = struct('NetworkPolicyRequestResponse', { decision: NetworkPolicyDecision });
/** `network/policyRequest` result. */
export type NetworkPolicyRequestResponse = t.TypeOf<typeof NetworkPolicyRequestResponse>;

/**
 * `network/policyDecision` params: an audit event, typed loosely (any object with a `processId`; the
 * other fields — `timestamp`, `scope`, `decision`, `source`, `reason`, `protocol`, `host`, `port`,
 * `method`, `client`, `policyOverride` — are passed through). codex logs it; malformed ones are ignored.
 */
export const NetworkPolicyDecisionNotification = t.intersection(
  [t.type({ processId: t.string }), t.UnknownRecord],
  'NetworkPolicyDecisionNotification',
);
/** `network/policyDecision` params. */
export type NetworkPolicyDecisionNotification = t.TypeOf<typeof NetworkPolicyDecisionNotification>;
