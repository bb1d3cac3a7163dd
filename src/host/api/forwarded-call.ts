/**
 * A call another replica forwarded, as the replica that gets it reads it (issue 39, see `./forwarding`):
 * the `exec-rx-forwarded-*` headers, taken only when signed with a replica key this replica accepts
 * (`./replica-keys`), and stripped from every call either way, so a client can never claim an identity.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { isRight } from 'fp-ts/Either';
import { CallerJson, callerJsonOf, callerOfJson } from '../../wire/caller-identity';
import type { OperatorCaller } from './operator-tokens';
import { ApiProblem } from './problem';
import type { ReplicaKeys, SignedForward } from './replica-keys';

/** The headers of a forwarded call (every one starting with {@link FORWARDED_PREFIX} is stripped from a call not signed). */
export const FORWARDED_PREFIX = 'exec-rx-forwarded-';
/** The forwarding replica's id; on an answer, the replica that forwarded the call. */
export const FORWARDED_BY_HEADER = 'exec-rx-forwarded-by';
/** The client's address, as the forwarding replica saw it (the audit log records it). */
export const FORWARDED_FOR_HEADER = 'exec-rx-forwarded-for';
/** The forwarded identity: base64url of `{"name","role","environments"}`. */
export const FORWARDED_IDENTITY_HEADER = 'exec-rx-forwarded-identity';
/** The hop count: 1 (a signed forward is never forwarded again). */
export const FORWARDED_HOPS_HEADER = 'exec-rx-forwarded-hops';
/** When the forward was signed (ms since the epoch). */
export const FORWARDED_AT_HEADER = 'exec-rx-forwarded-at';
/** The signature (`v1=<hex>`, see `./replica-keys`). */
export const FORWARDED_SIGNATURE_HEADER = 'exec-rx-forwarded-signature';

/** A caller as the identity header carries it: base64url of its JSON (`CallerJson`). */
export const encodeIdentity = (caller: OperatorCaller): string => Buffer.from(JSON.stringify(callerJsonOf(caller))).toString('base64url');

function decodeIdentity(text: string): OperatorCaller | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const decoded = CallerJson.decode(parsed);
  return isRight(decoded) ? callerOfJson(decoded.right) : undefined;
}

/** A call another replica forwarded, signed with a key this replica accepts. */
export interface ForwardedCall {
  /** The identity the forwarding replica authenticated. */
  readonly caller: OperatorCaller;
  /** The forwarding replica's id. */
  readonly by: string;
  /** The client's address, as the forwarding replica saw it. */
  readonly client: string;
}

const headerOf = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Reads and strips a request's forwarded-call headers. Resolves to undefined for a call that carries no
 * signature (any identity header it claimed is dropped: ignored); the call for one signed with a key in
 * `keys`; throws ApiProblem 401 `FORWARD_REFUSED` for a signed one this replica cannot take (a retired
 * key, a signature out of time, no replica key here, a malformed identity). `now`: this replica's clock.
 */
export function takeForwarded(req: IncomingMessage, keys: ReplicaKeys | undefined, now: number): ForwardedCall | undefined {
  const headers = req.headers;
  const found = Object.keys(headers).filter((name) => name.startsWith(FORWARDED_PREFIX));
  if (found.length === 0) return undefined;
  const value = (name: string): string => headerOf(headers, name) ?? '';
  const signature = headerOf(headers, FORWARDED_SIGNATURE_HEADER);
  const forward: SignedForward = {
    method: req.method ?? 'GET',
    target: req.url ?? '/',
    by: value(FORWARDED_BY_HEADER),
    client: value(FORWARDED_FOR_HEADER),
    identity: value(FORWARDED_IDENTITY_HEADER),
    hops: Number(value(FORWARDED_HOPS_HEADER)),
    at: Number(value(FORWARDED_AT_HEADER)),
  };
  for (const name of found) delete headers[name];
  if (signature === undefined) return undefined;
  if (keys === undefined) throw new ApiProblem(401, 'FORWARD_REFUSED', 'a forwarded call, but this replica has no replica key (--replica-key-file)');
  const refusal = keys.verify(forward, signature, now);
  const why = refusal === 'expired' ? 'signed too long ago' : 'not signed with a key this replica accepts';
  if (refusal !== undefined) throw new ApiProblem(401, 'FORWARD_REFUSED', `a forwarded call refused: ${why}`);
  const caller = decodeIdentity(forward.identity);
  if (caller === undefined || forward.by === '' || forward.hops !== 1) throw new ApiProblem(401, 'FORWARD_REFUSED', 'a forwarded call with a malformed identity');
  return { caller, by: forward.by, client: forward.client };
}
