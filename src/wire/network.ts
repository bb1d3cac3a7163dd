import * as t from 'io-ts';
import { Integer } from './integer';
import { struct } from './struct';

// docs/protocol.md#server-requests; known from codex's source only. Both only happen for processes
// started with a `networkProxy`.

/** The connection a proxied process wants to open: `protocol` is `http`, `https_connect`, `socks5_tcp` or `socks5_udp`. */
export const NetworkPolicyRequestTarget = t.intersection(
  [
    t.type({
      /** How it connects: `http`, `https_connect`, `socks5_tcp` or `socks5_udp`. */
      protocol: t.string,
      /** The host it wants to reach. */
      host: t.string,
      /** The port it wants to reach. */
      port: Integer,
    }),
    t.UnknownRecord,
  ],
  'NetworkPolicyRequestTarget',
);
/** The connection a proxied process wants to open. */
export type NetworkPolicyRequestTarget = t.TypeOf<typeof NetworkPolicyRequestTarget>;

/** `network/policyRequest` params (a server→client request): may `processId` open `request`? */
export const NetworkPolicyRequestParams = struct('NetworkPolicyRequestParams', {
  /** The process (started with a `networkProxy`) that wants to connect. */
  processId: t.string,
  /** Where it wants to connect (other fields the executor sends are passed through). */
  request: NetworkPolicyRequestTarget,
});
/** `network/policyRequest` params. */
export type NetworkPolicyRequestParams = t.TypeOf<typeof NetworkPolicyRequestParams>;

/** Our answer: allow, or deny/ask with a `reason` (≤ 1024 bytes, no control characters; codex denies with `not_allowed`). @hidden */
export const NetworkPolicyDecision = t.union(
  [
    struct('Allow', {
      /** Let the connection through. */
      type: t.literal('allow'),
    }),
    struct('Deny', {
      /** Refuse the connection. */
      type: t.literal('deny'),
      /** Why (≤ 1024 bytes, no control characters). */
      reason: t.string,
    }),
    struct('Ask', {
      /** Leave it to the user. */
      type: t.literal('ask'),
      /** Why (≤ 1024 bytes, no control characters). */
      reason: t.string,
    }),
  ],
  'NetworkPolicyDecision',
);
/**
 * A {@link NetworkPolicyDecider}'s answer to a `network/policyRequest`: `allow`, or `deny`/`ask` with a
 * `reason` (≤ 1024 bytes, no control characters; codex denies with `not_allowed`).
 * @useDeclaredType
 */
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
