/**
 * Direct-transport registrations (docs/protocol.md#registration): each successful `register` gets a
 * registration id and a random capability token bound to that environment, that registration and the
 * access key that signed it. Only a digest of the token is kept; tokens are compared in constant time and
 * never logged.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';

/** The outcome of checking an upgrade's registration id and token. */
export type TokenCheck =
  /** The latest registration of that environment, presented with its token by the key that registered it. */
  | 'ok'
  /** A genuine but superseded registration of that environment: answer 409 so the executor re-registers. */
  | 'stale'
  /** Anything else: unknown registration, wrong token, another environment's token, another key. */
  | 'unauthorized';

/** A fresh registration, as handed back to the executor. */
export interface IssuedRegistration {
  readonly registrationId: string;
  /** The capability token; goes into the url handed back and nowhere else. */
  readonly token: string;
}

interface Record {
  readonly environmentId: string;
  readonly accessKeyId: string;
  readonly tokenDigest: Buffer;
}

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** The SHA-256 digest of a capability token: what a host keeps of it (in memory, and in its data dir). */
export const tokenDigestOf = digest;

/** Superseded registrations remembered per environment (to answer 409 rather than 401). */
const SUPERSEDED_PER_ENVIRONMENT = 4;

/** The registration table. Bounded: the oldest records are forgotten first. Holds no timers or handles. */
export class Registrations {
  private readonly records = new Map<string, Record>();
  private readonly latest = new Map<string, { readonly registrationId: string; readonly issuedAt: number }>();

  /**
   * @param maxRecords how many registrations (all environments) are remembered.
   * @param scheduler the clock a registration's `issuedAt` is read from (`now()`); default asyncScheduler.
   */
  constructor(
    private readonly maxRecords: number,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {}

  /** Records a registration for `environmentId` signed by `accessKeyId`; it supersedes the previous one. */
  issue(environmentId: string, accessKeyId: string): IssuedRegistration {
    const registrationId = `reg-${randomUUID()}`;
    const token = randomBytes(32).toString('base64url');
    this.records.set(registrationId, { environmentId, accessKeyId, tokenDigest: digest(token) });
    this.latest.set(environmentId, { registrationId, issuedAt: this.scheduler.now() });
    this.prune(environmentId);
    return { registrationId, token };
  }

  /**
   * Takes back a registration a host of before issued (from its data dir): the latest of that
   * environment, checked as if issued now. Only the token's digest is known.
   */
  restore(environmentId: string, registrationId: string, accessKeyId: string, tokenDigest: Buffer): void {
    this.records.set(registrationId, { environmentId, accessKeyId, tokenDigest });
    this.latest.set(environmentId, { registrationId, issuedAt: this.scheduler.now() });
    this.prune(environmentId);
  }

  /** Checks an upgrade (see {@link TokenCheck}). The token comparison is constant-time. */
  check(environmentId: string, registrationId: string, token: string, accessKeyId: string): TokenCheck {
    const record = this.records.get(registrationId);
    const presented = digest(token);
    const tokenMatches = timingSafeEqual(presented, record?.tokenDigest ?? digest(`not ${token}`));
    if (record === undefined || !tokenMatches) return 'unauthorized';
    if (record.environmentId !== environmentId || record.accessKeyId !== accessKeyId) return 'unauthorized';
    return this.latest.get(environmentId)?.registrationId === registrationId ? 'ok' : 'stale';
  }

  /**
   * Whether `registrationId` is one this table holds. An upgrade naming one it does not hold may carry a
   * registration a previous run of the host issued (a host with a data dir answers it 409).
   */
  knows(registrationId: string): boolean {
    return this.records.has(registrationId);
  }

  /** The environments that have a registration, with when the latest was issued (epoch ms), oldest first. */
  environments(): ReadonlyArray<readonly [environmentId: string, issuedAt: number]> {
    return [...this.latest].map(([id, { issuedAt }]) => [id, issuedAt] as const).sort((a, b) => a[1] - b[1]);
  }

  /** The latest registration of each environment, as a store keeps it (its token as a digest). */
  latestRecords(): { readonly id: string; readonly registrationId: string; readonly accessKeyId: string; readonly tokenDigest: string }[] {
    const kept = [];
    for (const [id, { registrationId }] of this.latest) {
      const record = this.records.get(registrationId);
      if (record !== undefined) kept.push({ id, registrationId, accessKeyId: record.accessKeyId, tokenDigest: record.tokenDigest.toString('hex') });
    }
    return kept;
  }

  /** Forgets every registration of `environmentId` (its executor's next upgrade gets 401). */
  forget(environmentId: string): void {
    this.latest.delete(environmentId);
    for (const [id, record] of this.records) if (record.environmentId === environmentId) this.records.delete(id);
  }

  /** Forgets everything. */
  clear(): void {
    this.records.clear();
    this.latest.clear();
  }

  private prune(environmentId: string): void {
    const ofEnvironment = [...this.records].filter(([, r]) => r.environmentId === environmentId);
    for (const [id] of ofEnvironment.slice(0, Math.max(0, ofEnvironment.length - 1 - SUPERSEDED_PER_ENVIRONMENT))) this.records.delete(id);
    for (const [id, record] of this.records) {
      if (this.records.size <= this.maxRecords) break;
      this.records.delete(id);
      if (this.latest.get(record.environmentId)?.registrationId === id) this.latest.delete(record.environmentId);
    }
  }
}
