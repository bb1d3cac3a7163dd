/**
 * Preview links and the cookies they are exchanged for: grants to open one port of one environment until
 * a time, made by an operator token, signed with the replicas' key (`../replica-keys`; a host without one
 * makes a key at start, and its grants end with it). A grant names the token that made it: once that token
 * is revoked the grant opens nothing (and its open previews end, as its event streams do).
 *
 * A grant is `base64url(JSON [kind, environmentId, port, expiresAt, maker, seal]) . hex(HMAC)`, the HMAC
 * over the purpose `preview-<kind>` and the payload: a link is not a cookie's value, nor a cookie a link.
 * The seal is the maker token's (`OperatorTokens.tokenSeal`), keyed by a key derived from the replica key:
 * a token revoked, or given another secret, role or environments under the same name, has none that
 * matches. A key rotation (a new first key) ends the grants made before it.
 */
import type { ReplicaKeys } from '../replica-keys';

/** A link (in a url, once) or a session (the cookie a link is exchanged for). */
export type GrantKind = 'link' | 'session';

/** What a grant allows. */
export interface PreviewGrant {
  readonly kind: GrantKind;
  readonly environmentId: string;
  readonly port: number;
  /** Epoch ms after which it opens nothing. */
  readonly expiresAt: number;
  /** The name of the operator token that made it (never the token). */
  readonly maker: string;
  /** The maker token's seal (see the module's doc). */
  readonly seal: string;
}

/** Why a grant was refused: it does not parse or its signature is not ours, it ran out, it names another preview, or its maker was revoked. */
export type GrantRefusal = 'forged' | 'expired' | 'other preview' | 'revoked';

/** Signs and checks grants with the keys in use (a reload's new keys at once). */
export class PreviewGrants {
  constructor(private readonly keys: ReplicaKeys) {}

  /** The key a grant's seal is keyed by: derived from the signing key and the grant's scope (never shown). */
  sealKey(scope: Omit<PreviewGrant, 'kind' | 'seal'>): string {
    return this.keys.signPayload('preview-seal', [scope.environmentId, scope.port, scope.expiresAt, scope.maker].join('\n'));
  }

  /** The grant, signed. */
  sign(grant: PreviewGrant): string {
    const payload = Buffer.from(JSON.stringify([grant.kind, grant.environmentId, grant.port, grant.expiresAt, grant.maker, grant.seal])).toString('base64url');
    return `${payload}.${this.keys.signPayload(`preview-${grant.kind}`, payload)}`;
  }

  /**
   * The grant `text` carries when it is a `kind` grant signed with a key in use, for `environmentId` and
   * `port`, not expired at `now`, and made by a token `makerValid` still accepts; else why not.
   */
  check(
    text: string,
    kind: GrantKind,
    where: { readonly environmentId: string; readonly port: number },
    now: number,
    makerValid: (grant: PreviewGrant) => boolean,
  ): PreviewGrant | GrantRefusal {
    const dot = text.indexOf('.');
    const payload = text.slice(0, dot);
    if (dot < 1 || text.length > 2048 || !this.keys.verifyPayload(`preview-${kind}`, payload, text.slice(dot + 1))) return 'forged';
    const grant = decode(payload, kind);
    if (grant === undefined) return 'forged';
    if (grant.environmentId !== where.environmentId || grant.port !== where.port) return 'other preview';
    if (now >= grant.expiresAt) return 'expired';
    if (!makerValid(grant)) return 'revoked';
    return grant;
  }
}

function decode(payload: string, kind: GrantKind): PreviewGrant | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 6) return undefined;
  const [k, environmentId, port, expiresAt, maker, seal] = parsed as unknown[];
  if (k !== kind || typeof environmentId !== 'string' || typeof port !== 'number' || typeof expiresAt !== 'number') return undefined;
  if (typeof maker !== 'string' || typeof seal !== 'string') return undefined;
  return { kind, environmentId, port, expiresAt, maker, seal };
}

/** A refusal in words, as a problem's detail says it ("the preview link is …"). */
export const refusalWords = (refusal: GrantRefusal): string =>
  ({ forged: 'not one this host signed', expired: 'expired', 'other preview': 'for another environment or port', revoked: 'from a token that was revoked' })[refusal];
