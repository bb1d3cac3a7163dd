/**
 * The key replicas authenticate forwarded calls with (`exec-rx host --replica-key-file FILE`): a call that
 * needs an environment's owner is forwarded by the replica that got it (see `./forwarding`), which
 * checked the operator's token itself; the owner takes the forwarded identity (the token's name, role and
 * environments) only from a request signed with a key it accepts.
 *
 * The file holds one key, or two during a rotation, one per line (`#` comments and blank lines
 * ignored); each key is at least 32 characters (`openssl rand -base64 32`). The first key signs; every
 * key in the file is accepted. A rotation: add the new key as a second line on every replica and reload
 * each (SIGHUP); then put it first and reload each (they sign with it, and still accept the old one);
 * then remove the old one and reload each. A key is read from a file only, never from a flag (where `ps`
 * shows it) or from the shared store (where anyone with Redis could forge an identity), and never logged.
 *
 * What is signed (HMAC-SHA256): the method, the request target, the forwarding replica's id, the client's
 * address, the identity, the hop count and the signing time; a signature older or newer than
 * {@link SIGNATURE_SKEW_MS} is refused (a recorded forward cannot be replayed later). The body is not
 * signed: it streams; the channel between replicas is loopback or TLS (`--internal-ca`).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { ConfigError } from '../../errors';

/** The shortest key accepted, in characters. */
export const MIN_REPLICA_KEY_LENGTH = 32;

/** How far a forwarded call's signing time may be from the owner's clock. */
export const SIGNATURE_SKEW_MS = 60_000;

/** What a forwarded call's signature covers (see the module's doc). */
export interface SignedForward {
  /** The HTTP method. */
  readonly method: string;
  /** The request target: path and query, as the client sent it. */
  readonly target: string;
  /** The forwarding replica's id. */
  readonly by: string;
  /** The client's address, as the forwarding replica saw it. */
  readonly client: string;
  /** The forwarded identity, encoded (see `./forwarding`). */
  readonly identity: string;
  /** How many replicas forwarded it (1: replicas forward once). */
  readonly hops: number;
  /** When it was signed (ms since the epoch, the forwarding replica's clock). */
  readonly at: number;
}

/** Why a forwarded call's signature was refused. */
export type SignatureRefusal = 'no key' | 'bad signature' | 'expired';

const canonical = (f: SignedForward): string =>
  ['exec-rx-forward-v1', f.method, f.target, f.by, f.client, f.identity, String(f.hops), String(f.at)].join('\n');

const hmac = (key: string, forward: SignedForward): Buffer => createHmac('sha256', key).update(canonical(forward)).digest();

const payloadMac = (key: string, purpose: string, payload: string): Buffer => createHmac('sha256', key).update(`exec-rx-${purpose}-v1\n${payload}`).digest();

/** The keys of one file, checked; throws a ConfigError naming the file and line that does not fit. */
function parseKeys(text: string, where: string): readonly string[] {
  const keys: string[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const at = `${where} line ${index + 1}`;
    if (line.length < MIN_REPLICA_KEY_LENGTH) throw new ConfigError(`${at}: a replica key is at least ${MIN_REPLICA_KEY_LENGTH} characters (openssl rand -base64 32)`);
    if (/\s/.test(line)) throw new ConfigError(`${at}: a replica key holds no whitespace`);
    keys.push(line);
  });
  if (keys.length === 0) throw new ConfigError(`${where} holds no replica key`);
  if (keys.length > 2) throw new ConfigError(`${where} holds ${keys.length} keys: one, or two during a rotation`);
  if (keys.length === 2 && keys[0] === keys[1]) throw new ConfigError(`${where} holds the same key twice`);
  return keys;
}

/** The replica keys in use: signs with the first, accepts each. `replaceWith` swaps them at a reload. */
export class ReplicaKeys {
  private keys: readonly string[];

  /** Throws a ConfigError when `keys` is not one or two keys of {@link MIN_REPLICA_KEY_LENGTH} characters or more. */
  constructor(keys: readonly string[]) {
    this.keys = parseKeys(keys.join('\n'), 'the replica keys');
  }

  /** Signs `forward` with the first key: the signature header's value (`v1=<hex>`). */
  sign(forward: SignedForward): string {
    const [key] = this.keys;
    if (key === undefined) throw new ConfigError('no replica key');
    return `v1=${hmac(key, forward).toString('hex')}`;
  }

  /**
   * Whether `signature` is `forward`'s, by any key in use, signed within {@link SIGNATURE_SKEW_MS} of
   * `now`: undefined when it is; else why not.
   */
  verify(forward: SignedForward, signature: string, now: number): SignatureRefusal | undefined {
    const hex = /^v1=([0-9a-f]{64})$/.exec(signature)?.[1];
    if (hex === undefined) return 'bad signature';
    const given = Buffer.from(hex, 'hex');
    if (!this.keys.some((key) => timingSafeEqual(hmac(key, forward), given))) return 'bad signature';
    if (Math.abs(now - forward.at) > SIGNATURE_SKEW_MS) return 'expired';
    return undefined;
  }

  /**
   * Signs a payload of another purpose than a forward (a preview link: `../preview/preview-grants`) with the
   * first key: hex HMAC-SHA256 of `purpose` and `payload`. The purpose keeps one kind of signature from
   * passing for another.
   */
  signPayload(purpose: string, payload: string): string {
    const [key] = this.keys;
    if (key === undefined) throw new ConfigError('no replica key');
    return payloadMac(key, purpose, payload).toString('hex');
  }

  /** Whether `signature` is {@link signPayload}'s for `purpose` and `payload` by any key in use (constant time). */
  verifyPayload(purpose: string, payload: string, signature: string): boolean {
    if (!/^[0-9a-f]{64}$/.test(signature)) return false;
    const given = Buffer.from(signature, 'hex');
    return this.keys.some((key) => timingSafeEqual(payloadMac(key, purpose, payload), given));
  }

  /** How many keys are accepted now (2 during a rotation). */
  get size(): number {
    return this.keys.length;
  }

  /**
   * A short digest of the signing key (the first 12 hex characters of its SHA-256): what a log line may
   * say to tell two replicas' keys apart. Never the key.
   */
  get signingDigest(): string {
    return createHash('sha256')
      .update(this.keys[0] ?? '')
      .digest('hex')
      .slice(0, 12);
  }

  /** Takes `next`'s keys (a reload); this object's users see them at once. */
  replaceWith(next: ReplicaKeys): void {
    this.keys = next.keys;
  }
}

/** What {@link loadReplicaKeys} read. */
export interface LoadedReplicaKeys {
  readonly keys: ReplicaKeys;
  /** Said once at start and at each reload: the file is readable by others. */
  readonly warning?: string;
}

/** Reads `file`'s replica keys. Throws a ConfigError for an unreadable file or keys that do not fit. */
export function loadReplicaKeys(file: string): LoadedReplicaKeys {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error: unknown) {
    throw new ConfigError(`cannot read the replica key file ${file}`, { cause: error });
  }
  const keys = new ReplicaKeys(parseKeys(text, file));
  const open = process.platform !== 'win32' && (statSync(file).mode & 0o077) !== 0;
  return { keys, ...(open ? { warning: `replica key file ${file} is readable by others; chmod 600 it` } : {}) };
}
