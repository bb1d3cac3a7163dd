/**
 * The operator API's `Idempotency-Key`s: a retried start returns the process the first start made, never
 * a second one. Keys are scoped to the token's name and the environment. The starts of this run are
 * remembered in memory (the latest {@link REMEMBERED_STARTS}); each keyed start is also recorded in the
 * state store before it is sent, under a digest of its scope (never the key), so a host restarted after
 * it answers the retry from the record.
 */
import { createHash } from 'node:crypto';
import type { StartProcessRequest } from '../../wire/operator-api';
import type { StateStore, StartRecordState } from '../../store/state-store';
import { CannotStartError, HelperFailedError, InvalidTtySizeError, RpcError } from '../../errors';
import { ApiProblem } from './problem';

/** How many `Idempotency-Key`s the host remembers in memory (all tokens together). */
export const REMEMBERED_STARTS = 4096;

/** A start's key and the token that sent it. */
export interface StartKey {
  /** The name of the caller's token (stable across reloads and restarts; never the token). */
  readonly tokenId: string;
  /** The `Idempotency-Key`. */
  readonly key: string;
}

/** Where a keyed start is recorded before it is sent. */
export interface RecordedKey {
  /** The digest it is recorded under (see {@link startDigestOf}). */
  readonly digest: string;
  /** The digest of its request. */
  readonly fingerprint: string;
}

/** The digest a keyed start is recorded under: sha256 (hex) of its token's name, environment id and key. */
export const startDigestOf = (tokenId: string, environmentId: string, key: string): string =>
  createHash('sha256').update(`${tokenId}\u0000${environmentId}\u0000${key}`).digest('hex');

/** A digest of a start request (stable JSON: sorted keys), to tell a retried start from another request with the same key. */
export const startFingerprintOf = (request: StartProcessRequest): string => createHash('sha256').update(canonical(request)).digest('base64');

/** The request as stable JSON (sorted keys), for comparing a retried start with the first. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const reused = (): ApiProblem => new ApiProblem(422, 'IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another start');

/** How a keyed start goes, given by its caller. */
export interface KeyedStartSteps<T> {
  /** Starts it anew, recording it under `recorded` before it is sent. */
  readonly fresh: (recorded: RecordedKey) => Promise<T>;
  /** Answers a start the store recorded before a restart: its process id and how far it went. */
  readonly recorded: (processId: string, state: StartRecordState) => Promise<T>;
  /** The same start again (a replay of `first`). */
  readonly replay: (first: T) => T;
}

/** The keyed starts of one host (see the module's doc), each resolving with a `T`. */
export class KeyedStarts<T> {
  private readonly remembered = new Map<string, { readonly fingerprint: string; readonly started: Promise<T> }>();

  constructor(
    private readonly state: StateStore,
    /** The epoch an environment's writes carry now. */ private readonly epochOf: (environmentId: string) => number,
  ) {}

  /** Whether the store holds a start recorded under this key (one of before a restart, or of this run). Never rejects. */
  async isRecorded(environmentId: string, key: StartKey): Promise<boolean> {
    return (await this.state.start(startDigestOf(key.tokenId, environmentId, key.key)).catch(() => undefined)) !== undefined;
  }

  /**
   * The start of `request` under `key`: the first one's outcome (a replay) for a key seen before with the
   * same request, 422 `IDEMPOTENCY_KEY_REUSED` for another request, the recorded one's answer for a key
   * the store recorded, else a fresh start. Decided at once for this run's keys, so two concurrent starts
   * with one key make one process. A start that certainly made no process (refused) forgets its key (it
   * may be used again); any other failed one may have begun, and a retry is answered from its record.
   */
  start(environmentId: string, request: StartProcessRequest, key: StartKey, steps: KeyedStartSteps<T>): Promise<T> {
    const scope = `${key.tokenId}\u0000${environmentId}\u0000${key.key}`;
    const fingerprint = startFingerprintOf(request);
    const seen = this.remembered.get(scope);
    if (seen !== undefined) {
      if (seen.fingerprint !== fingerprint) return Promise.reject(reused());
      return seen.started.then(steps.replay);
    }
    const digest = startDigestOf(key.tokenId, environmentId, key.key);
    const started = this.decide(environmentId, digest, fingerprint, steps);
    this.remembered.set(scope, { fingerprint, started });
    started.catch(() => {
      if (this.remembered.get(scope)?.started === started) this.remembered.delete(scope);
    });
    if (this.remembered.size > REMEMBERED_STARTS) {
      const oldest = this.remembered.keys().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
    return started;
  }

  private async decide(environmentId: string, digest: string, fingerprint: string, steps: KeyedStartSteps<T>): Promise<T> {
    const recorded = await this.state.start(digest);
    if (recorded !== undefined && recorded.environmentId === environmentId) {
      if (recorded.fingerprint !== fingerprint) throw reused();
      return steps.recorded(recorded.processId, recorded.state);
    }
    try {
      return await steps.fresh({ digest, fingerprint });
    } catch (error: unknown) {
      // Only a start that certainly did not happen forgets its key. Any other (its answer lost with the
      // socket, timed out, its environment failed or let go meanwhile) may have begun: its record stays,
      // and a retry is answered from it (START_UNKNOWN unless the process is found), never with a second process.
      if (certainlyNotStarted(error)) await this.state.forgetStart(digest, this.epochOf(environmentId)).catch(() => undefined);
      throw error;
    }
  }
}

/**
 * Whether a start that failed with `error` certainly made no process: the executor refused it (its error
 * answer, a spawn failure), or the host refused it before the command went out (a bad request, a tty size,
 * a stdin FIFO that could not be made).
 */
const certainlyNotStarted = (error: unknown): boolean =>
  error instanceof RpcError || error instanceof ApiProblem || error instanceof CannotStartError || error instanceof HelperFailedError || error instanceof InvalidTtySizeError;
