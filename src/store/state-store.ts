/**
 * The port of a host's durable state: everything a host (this one after a restart, or another one) needs
 * to take an executor back. Registrations (so an executor re-dialling the url it registered with is let
 * in), each environment's executor session, owner and epoch, the operator API's keyed starts and each
 * process's stdin record (both written before what they name is sent), and the digest of the operator
 * token a host made. Never a secret: tokens only as digests, never a key's secret, never stdin's bytes.
 *
 * Shaped for a shared store: every read and write is asynchronous, and every write that depends on
 * owning an environment carries the writer's epoch and is refused (StaleEpochError, nothing kept) when
 * another owner has claimed the environment since. On one host every write carries the one epoch and
 * passes. What belongs to one process alone stays outside: the TCP port it bound ({@link BoundPort}) and
 * its data dir's lock.
 *
 * Adapters: the data dir (`store/disk`, `HostState`), memory (`store/memory`) and Redis (`store/redis`,
 * shared by replicas). The contract suite (`spec/store/state-store.contract.ts`) is the port's definition.
 */
import { StaleClaimError, StaleEpochError } from '../errors';
import type { ProcessKey } from './process-meta';
import type { StdinRecord } from './stdin-record';

/** How many keyed starts a store keeps (the latest; the oldest record goes first). */
export const RECORDED_STARTS = 4096;

/** An environment's latest registration as kept: never its token, only the token's digest. */
export interface PersistedRegistration {
  /** The environment id. */
  readonly id: string;
  /** The registration id the executor's url names. */
  readonly registrationId: string;
  /** The access key id that signed it. */
  readonly accessKeyId: string;
  /** The SHA-256 digest (hex) of its capability token. */
  readonly tokenDigest: string;
}

/** An environment's executor session, as the host installed it. */
export interface EnvironmentSession {
  /** The executor's session id (what the host resumes with `resumeSessionId`). */
  readonly sessionId: string;
  /** The access key id that signed the environment's registration (never its secret). */
  readonly accessKeyId: string;
}

/** An environment's session as the store remembers it. */
export interface PersistedEnvironment extends EnvironmentSession {
  /** The environment id. */
  readonly id: string;
  /** When its session was recorded (epoch ms, on the host's clock). */
  readonly updatedAt: number;
}

/** Who owns an environment now, and since which claim. */
export interface EnvironmentOwner {
  /** The owner's name (a host's instance id). */
  readonly owner: string;
  /** The environment's epoch: 1 at its first claim, one more at each claim since. */
  readonly epoch: number;
  /** When the executor signed the upgrade of the socket the owner claimed it on (epoch ms), when the claim said. */
  readonly signedAt?: number;
}

/** What a claim says of itself (`StateStore.claim`). */
export interface ClaimOptions {
  /**
   * When the executor signed the upgrade of the socket this claim is made on (epoch ms, its `x-amz-date`):
   * an order the executor fixes, which a stale upgrade cannot change however late a replica handles it.
   * A claim whose upgrade was signed before the current owner's, by at most {@link STALE_UPGRADE_WINDOW_MS},
   * is refused (StaleClaimError); one that says nothing, or an owner that recorded nothing, is not checked.
   */
  readonly signedAt?: number;
}

/**
 * How far before the current owner's upgrade another claim's upgrade may be signed and still be refused as
 * stale: 60 s. The executor signs every re-dial with its own clock, so a later upgrade is never signed
 * earlier unless that clock stepped back; past this window such a claim is let through (the claim after
 * `initialize` still keeps a stale socket out), so an executor whose clock stepped back is refused for at
 * most 60 s, within the 80 s it keeps a detached session.
 */
export const STALE_UPGRADE_WINDOW_MS = 60_000;

/** `sent`: the start was (or was about to be) sent; `started`: the executor answered it. */
export type StartRecordState = 'sent' | 'started';

/** A keyed start about to be sent, as the operator API records it. */
export interface NewStartRecord {
  /** sha256 (hex) of the token's name, the environment id and the `Idempotency-Key`: never the key itself. */
  readonly digest: string;
  /** The environment it goes to. */
  readonly environmentId: string;
  /** The process id the host chose for it. */
  readonly processId: string;
  /** A digest of the request, to tell a retry from another request with the same key. */
  readonly fingerprint: string;
}

/** One keyed start as kept. */
export interface StartRecord extends NewStartRecord {
  /** How far it went. */
  readonly state: StartRecordState;
  /** When it was recorded (epoch ms, on the host's clock): past the bound, the oldest goes first. */
  readonly recordedAt: number;
}

/**
 * What belongs to one host process alone, never to a shared store: the TCP port it bound, so that its
 * executors re-dial the url they registered with after a restart. The data dir's `HostState` keeps it.
 */
export interface BoundPort {
  /** The port bound last, if any. */
  readonly port: number | undefined;
  /** Records the port bound now. Rejects with the store's error. */
  setPort(port: number): Promise<void>;
}

/**
 * A host's durable state (see the module's doc). Each write resolves once kept (the next read, here or by
 * another host on the same store, sees it) and rejects with the store's error (or StaleEpochError); a
 * read never sees half a write. After `close()` every call rejects with ClosedError. The host's owner
 * closes it, after the host.
 */
export interface StateStore {
  /** The digest (hex SHA-256) of the operator token a host made at its first start, if one did: a restarted host accepts it again. */
  madeTokenDigest(): Promise<string | undefined>;
  /** Records the digest of the operator token the host made. */
  setMadeTokenDigest(digest: string): Promise<void>;

  /** Every environment's latest registration, by id. */
  registrations(): Promise<readonly PersistedRegistration[]>;
  /** Records an environment's latest registration (it supersedes the one before). */
  setRegistration(registration: PersistedRegistration): Promise<void>;

  /** Environment `id`'s session, if one was recorded. */
  environment(id: string): Promise<PersistedEnvironment | undefined>;
  /** Every environment with a recorded session, by id. */
  environments(): Promise<readonly PersistedEnvironment[]>;
  /** Who owns environment `id` now, if anyone claimed it. */
  owner(id: string): Promise<EnvironmentOwner | undefined>;
  /**
   * Makes `owner` the owner of environment `id` at the next epoch, and resolves with it: from then on a
   * write for `id` at an older epoch is refused. Ownership moves on a claim (a socket whose executor
   * answered `initialize`); it does not wait for the old owner. Rejects with StaleClaimError, nothing
   * kept, when `options.signedAt` says the claim's upgrade is older than the current owner's (see
   * {@link ClaimOptions}).
   */
  claim(id: string, owner: string, options?: ClaimOptions): Promise<number>;
  /** Records environment `id`'s session, at `epoch`; the same session again writes nothing. Rejects with StaleEpochError. */
  setSession(id: string, session: EnvironmentSession, epoch: number): Promise<void>;
  /** Forgets environment `id`: its session, registration, owner and stdin records. */
  forget(id: string): Promise<void>;

  /** The keyed start recorded under `digest`, if kept. */
  start(digest: string): Promise<StartRecord | undefined>;
  /** Records a start about to be sent (state `sent`, replacing one of the same digest), at `epoch`; the oldest past the bound go. Rejects with StaleEpochError. */
  recordStart(start: NewStartRecord, epoch: number): Promise<void>;
  /** Marks a recorded start `started` (the executor answered it), at `epoch`; nothing for one no longer kept. Rejects with StaleEpochError. */
  markStarted(digest: string, epoch: number): Promise<void>;
  /** Forgets a start (it failed: its key may be used again), at `epoch`. Rejects with StaleEpochError. */
  forgetStart(digest: string, epoch: number): Promise<void>;

  /** A process's stdin record, if one was kept. */
  stdin(key: ProcessKey): Promise<StdinRecord | undefined>;
  /** Replaces a process's stdin record, at `epoch` (written before the bytes it names are sent). Rejects with StaleEpochError. */
  setStdin(key: ProcessKey, record: StdinRecord, epoch: number): Promise<void>;
  /** Forgets a process's stdin record (it ended), at `epoch`. Rejects with StaleEpochError. */
  forgetStdin(key: ProcessKey, epoch: number): Promise<void>;

  /** Resolves once every write made so far is kept or failed. Never rejects. */
  flush(): Promise<void>;
  /** Waits for the writes made so far, then lets go of the store (the data dir's lock). Idempotent; never rejects. */
  close(): Promise<void>;
}

/** A list as the port answers it (`registrations()`, `environments()`): sorted by id, in UTF-16 code unit order. */
export const sortedById = <T extends { readonly id: string }>(values: Iterable<T>): T[] => [...values].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** Throws StaleClaimError when a claim signed at `signedAt` comes from an upgrade older than the current owner's (see {@link ClaimOptions}). */
export function checkClaim(environmentId: string, signedAt: number | undefined, current: EnvironmentOwner | undefined): void {
  const ownerSignedAt = current?.signedAt;
  if (signedAt === undefined || ownerSignedAt === undefined || current === undefined) return;
  if (signedAt < ownerSignedAt && ownerSignedAt - signedAt <= STALE_UPGRADE_WINDOW_MS) throw new StaleClaimError(environmentId, signedAt, ownerSignedAt, current.epoch);
}

/** The owner a claim makes: `owner` at `epoch`, with the claim's `signedAt` when it said one. */
export const claimedOwner = (owner: string, epoch: number, options: ClaimOptions = {}): EnvironmentOwner =>
  options.signedAt === undefined ? { owner, epoch } : { owner, epoch, signedAt: options.signedAt };

/** Throws StaleEpochError unless `epoch` is at least the environment's current one (none claimed: every epoch passes). */
export function checkEpoch(environmentId: string, epoch: number, current: EnvironmentOwner | undefined): void {
  if (current !== undefined && epoch < current.epoch) throw new StaleEpochError(environmentId, epoch, current.epoch);
}
