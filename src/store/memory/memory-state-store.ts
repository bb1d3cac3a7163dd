/**
 * The state port in memory: for a host without a data dir (`--data-dir none`), embedding and specs. It
 * keeps the same rules as the data dir (epochs, the start bound, what a write refuses) for as long as
 * the process lives, and nothing after: a host restarted on it remembers no registration, session or
 * keyed start, so an executor re-dialling gets a 409 and registers again, and a keyed start retried
 * after the restart is a new start.
 */
import type { SchedulerLike } from 'rxjs';
import { asyncScheduler } from 'rxjs';
import { ClosedError } from '../../errors';
import type { ProcessKey } from '../process-meta';
import { keyOf } from '../process-meta';
import type { ClaimOptions, EnvironmentOwner, EnvironmentSession, NewStartRecord, PersistedEnvironment, PersistedRegistration, StartRecord, StateStore } from '../state-store';
import { checkClaim, checkEpoch, claimedOwner, RECORDED_STARTS, sortedById } from '../state-store';
import type { StdinRecord } from '../stdin-record';
import { stdinFields } from '../stdin-record';

/** Options of {@link MemoryStateStore}. */
export interface MemoryStateStoreOptions {
  /** The clock of `updatedAt` and `recordedAt`. @default asyncScheduler */
  readonly scheduler?: SchedulerLike;
  /** How many keyed starts are kept. @default RECORDED_STARTS (4096) */
  readonly maxStarts?: number;
}


/** A host's state in memory (see the module's doc). Every call settles at once; what it returns is a copy. */
export class MemoryStateStore implements StateStore {
  private madeToken: string | undefined;
  private readonly registrationsById = new Map<string, PersistedRegistration>();
  private readonly sessions = new Map<string, PersistedEnvironment>();
  private readonly owners = new Map<string, EnvironmentOwner>();
  /** By digest, oldest first. */
  private readonly starts = new Map<string, StartRecord>();
  private readonly stdins = new Map<string, StdinRecord>();
  private readonly scheduler: SchedulerLike;
  private readonly maxStarts: number;
  private closed = false;

  constructor(options: MemoryStateStoreOptions = {}) {
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.maxStarts = options.maxStarts ?? RECORDED_STARTS;
  }

  madeTokenDigest(): Promise<string | undefined> {
    return this.run(() => this.madeToken);
  }

  setMadeTokenDigest(digest: string): Promise<void> {
    return this.run(() => void (this.madeToken = digest));
  }

  registrations(): Promise<readonly PersistedRegistration[]> {
    return this.run(() => sortedById(this.registrationsById.values()));
  }

  setRegistration(registration: PersistedRegistration): Promise<void> {
    const { id, registrationId, accessKeyId, tokenDigest } = registration;
    return this.run(() => void this.registrationsById.set(id, { id, registrationId, accessKeyId, tokenDigest }));
  }

  environment(id: string): Promise<PersistedEnvironment | undefined> {
    return this.run(() => this.sessions.get(id));
  }

  environments(): Promise<readonly PersistedEnvironment[]> {
    return this.run(() => sortedById(this.sessions.values()));
  }

  owner(id: string): Promise<EnvironmentOwner | undefined> {
    return this.run(() => this.owners.get(id));
  }

  claim(id: string, owner: string, options?: ClaimOptions): Promise<number> {
    return this.run(() => {
      const current = this.owners.get(id);
      checkClaim(id, options?.signedAt, current);
      const epoch = (current?.epoch ?? 0) + 1;
      this.owners.set(id, claimedOwner(owner, epoch, options));
      return epoch;
    });
  }

  setSession(id: string, session: EnvironmentSession, epoch: number): Promise<void> {
    return this.owned(id, epoch, () => {
      const known = this.sessions.get(id);
      if (known?.sessionId === session.sessionId && known.accessKeyId === session.accessKeyId) return;
      this.sessions.set(id, { id, sessionId: session.sessionId, accessKeyId: session.accessKeyId, updatedAt: this.scheduler.now() });
    });
  }

  forget(id: string): Promise<void> {
    return this.run(() => {
      this.sessions.delete(id);
      this.owners.delete(id);
      this.registrationsById.delete(id);
      for (const key of [...this.stdins.keys()]) if (key.startsWith(`${id}\u0000`)) this.stdins.delete(key);
    });
  }

  start(digest: string): Promise<StartRecord | undefined> {
    return this.run(() => this.starts.get(digest));
  }

  recordStart(start: NewStartRecord, epoch: number): Promise<void> {
    return this.owned(start.environmentId, epoch, () => {
      const { digest, environmentId, processId, fingerprint } = start;
      this.starts.delete(digest);
      this.starts.set(digest, { digest, environmentId, processId, fingerprint, state: 'sent', recordedAt: this.scheduler.now() });
      for (const oldest of this.starts.keys()) {
        if (this.starts.size <= this.maxStarts) break;
        this.starts.delete(oldest);
      }
    });
  }

  markStarted(digest: string, epoch: number): Promise<void> {
    const record = this.starts.get(digest);
    if (record === undefined) return this.run(() => undefined);
    return this.owned(record.environmentId, epoch, () => {
      if (this.starts.get(digest) === record) this.starts.set(digest, { ...record, state: 'started' });
    });
  }

  forgetStart(digest: string, epoch: number): Promise<void> {
    const record = this.starts.get(digest);
    if (record === undefined) return this.run(() => undefined);
    return this.owned(record.environmentId, epoch, () => void this.starts.delete(digest));
  }

  stdin(key: ProcessKey): Promise<StdinRecord | undefined> {
    return this.run(() => this.stdins.get(keyOf(key)));
  }

  setStdin(key: ProcessKey, record: StdinRecord, epoch: number): Promise<void> {
    return this.owned(key.environmentId, epoch, () => void this.stdins.set(keyOf(key), stdinFields(record)));
  }

  forgetStdin(key: ProcessKey, epoch: number): Promise<void> {
    return this.owned(key.environmentId, epoch, () => void this.stdins.delete(keyOf(key)));
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  /** `task`'s value, or ClosedError once closed; a throw becomes a rejection. */
  private run<T>(task: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError('the host state is closed'));
    try {
      return Promise.resolve(task());
    } catch (error: unknown) {
      return Promise.reject(error);
    }
  }

  /** `task` when `epoch` still owns environment `id` (else StaleEpochError, nothing done). */
  private owned<T>(id: string, epoch: number, task: () => T): Promise<T> {
    return this.run(() => {
      checkEpoch(id, epoch, this.owners.get(id));
      return task();
    });
  }
}
