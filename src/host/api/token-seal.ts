/**
 * The seal of an operator token that a download ticket carries (`OperatorTokens.tokenSeal`, see
 * `./log-tickets`): what lets the replica that redeems a ticket check that it still accepts the very token
 * that asked for it, after a reload on any replica, without a shared store ever holding the token, its
 * digest or the ticket.
 *
 * It is HMAC-SHA256 (hex) keyed by the ticket over the token's name and the SHA-256 of its secret. The
 * store keeps it beside the ticket's SHA-256 only: without the ticket (256 random bits, never stored) it
 * says nothing of the token, not even enough to test a guess of a weak one. Replicas with the same token
 * compute the same seal; a token whose secret, role or environments changed has none that matches.
 */
import { createHmac } from 'node:crypto';
import type { Caller } from '../../wire/caller-identity';

/** What a seal or a set digest reads of one accepted token: who it is and its secret's SHA-256 (the token is never kept). */
export interface AcceptedToken {
  readonly caller: Caller;
  /** The SHA-256 of the token. */
  readonly digest: Uint8Array;
}

/** Names what a seal hashes, so that the same bytes hashed for another purpose never give a seal. */
const DOMAIN = 'exec-rx operator token seal v1\n';

/** Whether two callers are one: the same name, role and environments. */
export const sameCaller = (a: Caller, b: Caller): boolean =>
  a.name === b.name &&
  a.role === b.role &&
  (a.environments === undefined
    ? b.environments === undefined
    : b.environments !== undefined && a.environments.size === b.environments.size && [...a.environments].every((id) => b.environments?.has(id) === true));

/**
 * The seal (hex) keyed by `key` of the token among `tokens` that `caller` is (its name, with the same role
 * and environments); `undefined` when none is.
 */
export function tokenSealOf(tokens: readonly AcceptedToken[], caller: Caller, key: string): string | undefined {
  const token = tokens.find((one) => one.caller.name === caller.name);
  if (token === undefined || !sameCaller(token.caller, caller)) return undefined;
  return createHmac('sha256', key).update(DOMAIN).update(token.caller.name).update('\n').update(token.digest).digest('hex');
}
