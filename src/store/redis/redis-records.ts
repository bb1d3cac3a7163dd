/**
 * The state store's records as Redis holds them (hashes of text fields, a stdin record's JSON), read back
 * into the port's shapes. A record with a field missing or wrong reads as absent, as a damaged file does
 * on disk: nothing here throws on what Redis answers, but for a claim's reply, which may be a refusal
 * (`claimedEpoch`).
 */
import { ExecClientError, messageOf, StaleClaimError, StoreUnavailableError } from '../../errors';
import type { EnvironmentOwner, PersistedEnvironment, PersistedRegistration, StartRecord } from '../state-store';
import type { StdinRecord } from '../stdin-record';
import { stdinRecordOf } from '../stdin-record';

/** A hash as ioredis's HGETALL answers it (an empty object for a missing key). */
export type RedisHash = Readonly<Record<string, string>>;

const integerOf = (text: string | undefined): number | undefined => {
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
};

/** An owner hash (`owner`, `epoch`), or undefined. */
export function ownerOf(hash: RedisHash): EnvironmentOwner | undefined {
  const epoch = integerOf(hash.epoch);
  const signedAt = integerOf(hash.signedAt);
  if (hash.owner === undefined || epoch === undefined) return undefined;
  return signedAt === undefined ? { owner: hash.owner, epoch } : { owner: hash.owner, epoch, signedAt };
}

/** Environment `id`'s session hash, or undefined. */
export function sessionOf(id: string, hash: RedisHash): PersistedEnvironment | undefined {
  const { sessionId, accessKeyId } = hash;
  const updatedAt = integerOf(hash.updatedAt);
  return sessionId === undefined || accessKeyId === undefined || updatedAt === undefined ? undefined : { id, sessionId, accessKeyId, updatedAt };
}

/** Environment `id`'s registration hash, or undefined. */
export function registrationOf(id: string, hash: RedisHash): PersistedRegistration | undefined {
  const { registrationId, accessKeyId, tokenDigest } = hash;
  return registrationId === undefined || accessKeyId === undefined || tokenDigest === undefined ? undefined : { id, registrationId, accessKeyId, tokenDigest };
}

/** A keyed start's hash, or undefined. */
export function startOf(hash: RedisHash): StartRecord | undefined {
  const { digest, environmentId, processId, fingerprint, state } = hash;
  const recordedAt = integerOf(hash.recordedAt);
  if (digest === undefined || environmentId === undefined || processId === undefined || fingerprint === undefined || recordedAt === undefined) return undefined;
  return state === 'sent' || state === 'started' ? { digest, environmentId, processId, fingerprint, state, recordedAt } : undefined;
}

/** A stdin record's JSON, or undefined. */
export function stdinOf(json: string | null): StdinRecord | undefined {
  if (json === null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? stdinRecordOf(value as Record<string, unknown>) : undefined;
}

/** Where a keyed start's record is, as the start index holds it: `"<nonce> <environmentId>"`. */
export interface IndexedStart {
  /** The write that recorded it (a record recorded again since has another). */
  readonly nonce: string;
  /** The environment whose tag holds the record. */
  readonly environmentId: string;
  /** The index's value as it was read (what a conditional unindex compares). */
  readonly entry: string;
}

/** The index's value for a start recorded by write `nonce` in `environmentId`. */
export const indexEntry = (nonce: string, environmentId: string): string => `${nonce} ${environmentId}`;

/** An index value read back, or undefined. */
export function indexedStartOf(entry: string | null): IndexedStart | undefined {
  if (entry === null) return undefined;
  const space = entry.indexOf(' ');
  return space <= 0 ? undefined : { nonce: entry.slice(0, space), environmentId: entry.slice(space + 1), entry };
}

/** The epoch the claim script's `reply` made; throws StaleClaimError when it refused a claim signed at `signedAt` (a stale upgrade's). */
export function claimedEpoch(id: string, signedAt: number | undefined, reply: unknown): number {
  const [status, first, second] = Array.isArray(reply) ? reply.map(String) : [];
  if (status === 'stale') throw new StaleClaimError(id, signedAt ?? 0, Number(first), Number(second));
  if (status !== 'ok' || first === undefined) throw new Error(`redis: unexpected claim reply ${JSON.stringify(reply)}`);
  return Number(first);
}

/**
 * A failure of a state store call: a typed one, or a bad argument (TypeError, RangeError), as it is;
 * Redis's own (its connection down, a command timed out, a refusal) as StoreUnavailableError.
 */
export const asStoreError = (error: unknown): unknown =>
  error instanceof ExecClientError || error instanceof TypeError || error instanceof RangeError ? error : new StoreUnavailableError(messageOf(error), { cause: error });
