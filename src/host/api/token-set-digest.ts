/**
 * The digest of a set of operator tokens: what replicas compare to tell whether they accept the same set
 * (`OperatorTokens.setDigest`, the `exec-rx-tokens-digest` header of the probes and the
 * `exec_rx_host_operator_tokens_info` metric). The same set gives the same digest on every replica, in
 * whatever order its file lists the tokens; a change of a name, a role, an environment or a secret gives
 * another.
 *
 * It is SHA-256 over the sorted entries (name, role, sorted environments, the hex SHA-256 of the secret),
 * truncated to {@link SET_DIGEST_LENGTH} hex digits: a hash over the tokens' digests, never over a token,
 * so it tells nothing a caller could present, nor one token's digest (to test a guess against it one needs
 * every other entry's digest too).
 */
import { createHash } from 'node:crypto';
import type { AcceptedToken } from './token-seal';

/** The hex digits of a set digest shown (64 bits: enough to tell sets apart, nothing to attack). */
export const SET_DIGEST_LENGTH = 16;

/** Names the hash, so that the same bytes hashed for another purpose never give this digest. */
const DOMAIN = 'exec-rx operator token set v1\n';

/** The digests already computed, by set: a set is replaced on reload, never changed in place. */
const computed = new WeakMap<readonly AcceptedToken[], string>();

/** The set digest of `tokens` (see the module comment); computed once per set. */
export function tokenSetDigest(tokens: readonly AcceptedToken[]): string {
  const known = computed.get(tokens);
  if (known !== undefined) return known;
  // Names are unique (and safe ids, as are environments: no `*`), so sorting by name orders the set, and
  // JSON keeps the fields apart; `null` is every environment.
  const entries = tokens
    .map(({ caller, digest }) => {
      const environments = caller.environments === undefined ? null : [...caller.environments].sort();
      return [caller.name, caller.role, environments, Buffer.from(digest).toString('hex')] as const;
    })
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const digest = createHash('sha256').update(DOMAIN).update(JSON.stringify(entries)).digest('hex').slice(0, SET_DIGEST_LENGTH);
  computed.set(tokens, digest);
  return digest;
}
